import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { namedSchema } from '../../../common/swagger/named-schemas';

export class WebhookResultView {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ description: 'False for a repeated delivery, an unknown event type or an unknown message' })
  processed: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The stored event (the first delivery’s for a repeat); null when nothing was stored',
  })
  eventId: string | null;
}

export class WebhookEventResultView {
  @ApiProperty() processed: boolean;
  @ApiProperty({ type: String, nullable: true }) eventId: string | null;
}

export class PrimaryProviderResultView extends WebhookResultView {
  @ApiPropertyOptional({
    type: [WebhookEventResultView],
    description:
      'A request of several events (SendGrid): each one’s outcome, in order; `processed` and `eventId` ' +
      'above are the first processed one’s',
  })
  events?: WebhookEventResultView[];
}

export class ColdProviderResultView {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ example: 'Event received; the cold provider is not processed yet' }) message: string;
}

const EVENT_EXAMPLE = {
  type: 'email.delivered',
  created_at: '2026-11-23T12:00:00.000Z',
  data: { email_id: '6561f0c2a1b2c3d4e5f60718@mail.example.com', to: ['person@example.com'] },
};

/** A provider's event: any JSON object. */
export const PROVIDER_EVENT_BODY = namedSchema('ProviderEvent', {
  type: 'object',
  description: "One event in its provider's own format",
  additionalProperties: true,
  example: EVENT_EXAMPLE,
});

/** SendGrid's batch: an array of events. */
const PROVIDER_EVENT_BATCH = namedSchema('ProviderEventBatch', {
  type: 'array',
  description: 'Several events in one request (SendGrid)',
  items: PROVIDER_EVENT_BODY,
  maxItems: 1_000,
  example: [EVENT_EXAMPLE],
});

/**
 * What the primary provider route accepts, in the format EMAIL_PROVIDER names (docs/api/providers/): a JSON
 * object (Resend, Postmark, Mailgun; SES's SNS envelope, sent as text/plain) or an array of objects
 * (SendGrid's batch). Its authentication is checked before the body is read.
 */
export const PRIMARY_PROVIDER_BODY = namedSchema('PrimaryProviderEventBody', {
  description: 'One event, or an array of events (SendGrid)',
  oneOf: [PROVIDER_EVENT_BODY, PROVIDER_EVENT_BATCH],
  example: EVENT_EXAMPLE,
});
