import { ApiProperty } from '@nestjs/swagger';

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

export class ColdProviderResultView {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ example: 'Event received; the cold provider is not processed yet' }) message: string;
}

/** A provider's event: any JSON object (the primary provider's shape is documented in the README). */
export const PROVIDER_EVENT_BODY = {
  type: 'object',
  additionalProperties: true,
  example: {
    type: 'email.delivered',
    created_at: '2026-11-23T12:00:00.000Z',
    data: { email_id: '6561f0c2a1b2c3d4e5f60718@mail.example.com', to: ['person@example.com'] },
  },
} as const;
