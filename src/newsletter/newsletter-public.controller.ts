import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  NotFoundException,
  Param,
  Post,
  Req,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiKeyAuth } from '../common/auth/api-key-auth.decorator';
import { AcceptsBody, PUBLIC_BODY_BYTES } from '../common/http/body/body-policy';
import { clientIp } from '../common/http/client-ip';
import { ok } from '../common/http/envelope';
import { ApiErrorMessage, ApiErrors, ApiOkEnvelope } from '../common/swagger/envelope.decorators';
import { UNDELIVERABLE_ADDRESS } from '../email/suppression/undeliverable-address';
import { ContactsService, normaliseEmail } from '../contacts/contacts.service';
import { UnsubscribeLinks } from '../contacts/unsubscribe/unsubscribe-links';
import { SubscribeDto, SubscribeResult } from './dto/subscriber.dto';
import { SubscribersService, SubscriptionSources } from './subscribers.service';

export const UNSUBSCRIBED_TEXT = 'Unsubscribed';
export const UNSUBSCRIBE_TOKEN_NOT_FOUND = 'Unsubscribe token not found';

const TOKEN_PARAM = {
  name: 'token',
  description: "Signed unsubscribe token of a campaign mail or a joinlist answer, for the path's app",
};
const UNSUBSCRIBED = {
  description: `The subscription is (now) unsubscribed: the plain-text body \`${UNSUBSCRIBED_TEXT}\`, also when it already was`,
  content: { 'text/plain': { schema: { type: 'string', example: UNSUBSCRIBED_TEXT } } },
};

/**
 * The newsletter as a client app's backend sees it (secret API key of the path's app): the person's own
 * signup, and unsubscribing with a token the app received (e.g. relayed from its own unsubscribe page).
 */
@ApiTags('Newsletter')
@Controller(':appId/newsletter')
@ApiKeyAuth()
export class NewsletterPublicController {
  constructor(
    private readonly subscribers: SubscribersService,
    private readonly contacts: ContactsService,
    private readonly links: UnsubscribeLinks,
  ) {}

  @Post('subscribe')
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @ApiOperation({
    operationId: 'subscribeNewsletter',
    summary:
      'Subscribe a person (consent given, source `api`); someone who had unsubscribed or opted out (or anyone, ' +
      'on an app with `features.doubleOptIn`) is mailed a confirmation link instead, with the same answer',
  })
  @ApiOkEnvelope(SubscribeResult, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiErrorMessage(HttpStatus.UNPROCESSABLE_ENTITY, UNDELIVERABLE_ADDRESS, 'The address hard-bounced')
  async subscribe(@Param('appId') appId: string, @Body() dto: SubscribeDto, @Req() request: FastifyRequest) {
    await this.subscribers.subscribe(appId, dto, clientIp(request));
    // What the caller sent, never what is stored: the person record is shared by every app.
    return ok({ email: normaliseEmail(dto.email), firstName: dto.firstName ?? null });
  }

  @Get('unsubscribe/:token')
  @ApiOperation({ operationId: 'unsubscribeNewsletter', summary: 'Unsubscribe at once with a token' })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/plain')
  @ApiOkResponse(UNSUBSCRIBED)
  @ApiErrorMessage(HttpStatus.NOT_FOUND, UNSUBSCRIBE_TOKEN_NOT_FOUND, 'Invalid token, or one of another app')
  unsubscribeByGet(
    @Param('appId') appId: string,
    @Param('token') token: string,
    @Req() request: FastifyRequest,
  ) {
    return this.unsubscribe(appId, token, request);
  }

  @Post('unsubscribe/:token')
  @HttpCode(HttpStatus.OK)
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @ApiOperation({ operationId: 'unsubscribeNewsletterByPost', summary: 'Unsubscribe at once with a token' })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/plain')
  @ApiOkResponse(UNSUBSCRIBED)
  @ApiErrorMessage(HttpStatus.NOT_FOUND, UNSUBSCRIBE_TOKEN_NOT_FOUND, 'Invalid token, or one of another app')
  unsubscribeByPost(
    @Param('appId') appId: string,
    @Param('token') token: string,
    @Req() request: FastifyRequest,
  ) {
    return this.unsubscribe(appId, token, request);
  }

  /** Idempotent: a person already unsubscribed, or erased since, gets the same answer. */
  private async unsubscribe(appId: string, token: string, request: FastifyRequest): Promise<string> {
    const target = this.links.read(token);
    if (!target || target.appId !== appId) throw new NotFoundException(UNSUBSCRIBE_TOKEN_NOT_FOUND);
    const origin = { source: SubscriptionSources.api, actor: 'self', ip: clientIp(request) };
    await this.contacts.unsubscribe(target.contactId, appId, origin, target.signupId);
    return UNSUBSCRIBED_TEXT;
  }
}
