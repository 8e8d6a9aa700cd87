import { BadRequestException, Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../../common/auth/public.decorator';
import { AcceptsBody, MAX_BODY_BYTES, PUBLIC_BODY_BYTES } from '../../common/http/body/body-policy';
import { SignedWebhook, WebhookSignature } from '../../common/auth/webhook-signature.decorator';
import { ApiErrors } from '../../common/swagger/envelope.decorators';
import type { VerifiedWebhook } from './providers/provider-format';
import {
  ColdProviderResultView,
  PRIMARY_PROVIDER_BODY,
  PrimaryProviderResultView,
  PROVIDER_EVENT_BODY,
} from './dto/provider-webhook.dto';
import { ProviderWebhookService } from './provider-webhook.service';

/**
 * SendGrid posts its events in batches of up to 768 KB, a few thousand events of about 20 fields: the
 * route takes the largest body any route may (1 MB) and that many fields. Authentication is checked first
 * (for SNS and Mailgun, whose signature is inside the body, after a parse within these limits).
 */
const PROVIDER_BATCH_FIELDS = 60_000;

/** Receivers of e-mail providers' lifecycle events (spec "Webhooks"). */
@ApiTags('Webhooks')
@Controller('email-events')
export class ProviderWebhookController {
  constructor(private readonly webhooks: ProviderWebhookService) {}

  /**
   * Outside the per-client budget: the provider delivers a large campaign's events in bursts from a few
   * addresses. A request that fails its provider's check counts against its IP's budget of forged
   * signatures (429 once used up; see webhook-signature.strategy.ts). 503: SES's signing certificate or
   * subscription link could not be fetched (SNS retries).
   */
  @Post('primary-provider')
  @HttpCode(HttpStatus.OK)
  @WebhookSignature()
  @AcceptsBody({ maxBytes: MAX_BODY_BYTES, maxFields: PROVIDER_BATCH_FIELDS })
  @SkipThrottle({ default: true, route: true })
  @ApiOperation({
    operationId: 'receivePrimaryProviderEvent',
    summary: 'Primary provider webhook (the EMAIL_PROVIDER format): records its e-mail events',
    description:
      'Reads the format EMAIL_PROVIDER names, authenticated before the body is trusted: resend (Standard ' +
      'Webhooks headers), ses (SNS envelope, text/plain, signed), sendgrid (array of events, ECDSA headers), ' +
      'postmark (basic auth), mailgun (signature object in the body). See docs/api/providers/.',
  })
  @ApiConsumes('application/json', 'text/plain')
  @ApiBody({ schema: PRIMARY_PROVIDER_BODY })
  @ApiOkResponse({
    type: PrimaryProviderResultView,
    description: 'Each event is recorded, or was already (a batch answers one result per event)',
  })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS, HttpStatus.SERVICE_UNAVAILABLE)
  async primary(@SignedWebhook() webhook: VerifiedWebhook): Promise<PrimaryProviderResultView> {
    return { success: true, ...(await this.webhooks.ingest(webhook)) };
  }

  @Post('cold-provider')
  @HttpCode(HttpStatus.OK)
  @Public()
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @ApiOperation({
    operationId: 'receiveColdProviderEvent',
    summary: 'Cold provider webhook: accepts any JSON object, stores nothing (placeholder)',
  })
  @ApiBody({ schema: PROVIDER_EVENT_BODY })
  @ApiOkResponse({ type: ColdProviderResultView, description: 'The event is accepted (nothing is stored)' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.PAYLOAD_TOO_LARGE)
  cold(@Body() body: unknown): ColdProviderResultView {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BadRequestException('The body must be a JSON object');
    }
    return { success: true, message: 'Event received; the cold provider is not processed yet' };
  }
}
