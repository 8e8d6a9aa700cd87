import { Controller, Get, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../common/auth/public.decorator';
import { ApiErrors } from '../../common/swagger/envelope.decorators';
import { AcceptsBody } from '../../common/http/body/body-policy';
import { clientIp } from '../../common/http/client-ip';
import { LinkDomains } from '../../sender-domains/link-domains';
import { sendPage } from '../unsubscribe/unsubscribe-page';
import { PublicSignups } from './public-signups.service';
import { SignupConfirmationLinks } from './signup-confirmation-links';
import {
  CONFIRM_SIGNUP_PAGE,
  SIGNUP_CONFIRMED_PAGE,
  SIGNUP_LINK_INVALID_PAGE,
} from './signup-confirmation-page';

/** Typed on GET too, where no handler argument gives Swagger the type (generated clients need one). */
const TOKEN_PARAM = {
  name: 'token',
  type: String,
  description: 'Signed confirmation token from the confirmation e-mail',
};
/** The page's button posts an empty form; nothing in the body is read. */
const FORM_BYTES = 1024;
const FORM_FIELDS = 10;

/**
 * The link of a signup confirmation mail (docs/decisions/campaigns-joinlist-consent.md). GET shows a page
 * with a button and changes nothing (the same page for any token); the button's POST confirms. No
 * credentials: the signed token is the whole request.
 */
@ApiTags('Joinlist')
@Controller('joinlist/confirm')
@Public()
export class SignupConfirmationController {
  constructor(
    private readonly signups: PublicSignups,
    private readonly links: SignupConfirmationLinks,
    private readonly linkDomains: LinkDomains,
  ) {}

  @Get(':token')
  @ApiOperation({
    operationId: 'signupConfirmationPage',
    summary: 'The signup confirmation page (no change)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiProduces('text/html')
  @ApiOkResponse({
    description: 'An HTML page with a confirm button, the same for valid and invalid tokens',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  async page(@Param('token') token: string, @Res() reply: FastifyReply) {
    await this.linkDomains.assertAnswers(reply.request.hostname, this.links.read(token)?.appId);
    return sendPage(reply, CONFIRM_SIGNUP_PAGE);
  }

  @Post(':token')
  @HttpCode(HttpStatus.OK)
  @AcceptsBody({ maxBytes: FORM_BYTES, maxFields: FORM_FIELDS, form: true })
  @ApiOperation({
    operationId: 'confirmSignup',
    summary: 'Confirm a held-back newsletter signup (the confirmation page button)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiProduces('text/html')
  @ApiOkResponse({
    description: 'An HTML page: subscribed, or the link is no longer valid (unknown, expired or used)',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  async confirm(@Param('token') token: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    await this.linkDomains.assertAnswers(request.hostname, this.links.read(token)?.appId);
    const confirmed = await this.signups.confirm(token, clientIp(request));
    return sendPage(reply, confirmed ? SIGNUP_CONFIRMED_PAGE : SIGNUP_LINK_INVALID_PAGE);
  }
}
