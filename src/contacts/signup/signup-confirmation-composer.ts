import { Injectable } from '@nestjs/common';
import { ComposerHandler, type ComposedContent } from '../../email/jobs/email-handlers';
import type { EmailMessage } from '../../email/jobs/email-message';
import { JobSecrets } from '../../email/jobs/job-secrets';
import { LinkDomains } from '../../sender-domains/link-domains';
import { confirmationMail } from './signup-confirmation-email';
import { SignupConfirmationLinks } from './signup-confirmation-links';

/** The `composer` kind of signup confirmation mails. */
export const SIGNUP_CONFIRMATION_COMPOSER = 'signup-confirmation';
/** The name of the sealed secret (`JobSecrets`) that holds the link's token. */
export const SIGNUP_CONFIRMATION_SECRET = 'token';

/**
 * Renders a confirmation mail when the worker sends it: the link confirms a subscription, so it is a
 * secret like a sign-in link (docs/decisions/security-secrets-in-jobs.md). The job holds its token
 * only sealed and never the rendered body.
 */
@Injectable()
export class SignupConfirmationComposer {
  constructor(
    private readonly secrets: JobSecrets,
    private readonly links: SignupConfirmationLinks,
    private readonly linkDomains: LinkDomains,
  ) {}

  /** Null (the job is dead at once) when the token cannot be opened or the variables are not ours. */
  @ComposerHandler(SIGNUP_CONFIRMATION_COMPOSER)
  async compose(message: EmailMessage): Promise<ComposedContent | null> {
    const token = this.secrets.open(message.sealed)?.[SIGNUP_CONFIRMATION_SECRET];
    const appName = message.variables?.appName;
    if (!token || typeof appName !== 'string') return null;
    return confirmationMail(appName, this.links.url(token, await this.linkDomains.baseUrlOf(message.appId)));
  }
}
