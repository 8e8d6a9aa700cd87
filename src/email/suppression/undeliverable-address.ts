import { UnprocessableEntityException } from '@nestjs/common';

/** The answer of a route that would mail an address that hard-bounced: nothing is sent, and it says so. */
export const UNDELIVERABLE_ADDRESS =
  'No e-mail is sent: this address does not accept mail (an earlier message to it bounced)';

/**
 * 422 for mail a person asked for (a sign-in link, a confirmation) to an address that hard-bounced
 * (docs/decisions/api-suppressed-address-answers.md): the only cause that stops such mail.
 */
export class UndeliverableAddressException extends UnprocessableEntityException {
  constructor() {
    super(UNDELIVERABLE_ADDRESS);
  }
}
