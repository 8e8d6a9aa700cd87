import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/auth/public.decorator';
import { AcceptsBody, PUBLIC_BODY_BYTES } from '../../common/http/body/body-policy';
import { type Done, done } from '../../common/http/envelope';
import { RouteLimit } from '../../common/http/rate-limit';
import { ApiDoneEnvelope, ApiErrorMessage, ApiErrors } from '../../common/swagger/envelope.decorators';
import { ADDRESS_WINDOW_MS, LINKS_PER_ADDRESS } from './address-limit';
import { UNDELIVERABLE_ADDRESS } from '../../email/suppression/undeliverable-address';
import { EndUserSessionResponse, RequestMagicLinkDto, VerifyMagicLinkDto } from './dto/magic-link.dto';
import { APP_INACTIVE, INVALID_LINK, MagicLinkService } from './magic-link.service';

/** Link requests per minute per client IP (each may send a mail); per address see address-limit.ts. */
const REQUEST_RATE_LIMIT = 5;
/** Verifies per minute per client IP: a person clicks once; guessing 256-bit tokens is hopeless anyway. */
const VERIFY_RATE_LIMIT = 10;

/** The same answer for every valid request, known address or not (no account enumeration). */
const SENT_MESSAGE = 'If the address can receive e-mail, a sign-in link is on its way';

@ApiTags('Magic link')
@Controller('auth/magic-link')
export class MagicLinkController {
  constructor(private readonly magicLinks: MagicLinkService) {}

  @Post()
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @Public()
  @HttpCode(HttpStatus.OK)
  @RouteLimit(REQUEST_RATE_LIMIT)
  @ApiOperation({
    operationId: 'requestMagicLink',
    summary: 'E-mail a single-use sign-in link (15 minutes) to an end user of an active app',
    description:
      'Always the same 200 for a valid body and an active app, whether or not the address is known; ' +
      '422 when the address hard-bounced (no mail reaches it, so none is sent). ' +
      `At most ${REQUEST_RATE_LIMIT} requests per minute per client IP (429); at most ${LINKS_PER_ADDRESS} ` +
      `links per address and app in ${ADDRESS_WINDOW_MS / 60_000} minutes (further requests answer the ` +
      'same 200 and send nothing).',
  })
  @ApiDoneEnvelope(SENT_MESSAGE)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS)
  @ApiErrorMessage(HttpStatus.NOT_FOUND, 'App not found', 'No active app has this `appId`')
  @ApiErrorMessage(HttpStatus.UNPROCESSABLE_ENTITY, UNDELIVERABLE_ADDRESS, 'The address hard-bounced')
  async request(@Body() dto: RequestMagicLinkDto): Promise<Done> {
    await this.magicLinks.request(dto.email, dto.appId);
    return done(SENT_MESSAGE);
  }

  @Post('verify')
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @Public()
  @HttpCode(HttpStatus.OK)
  @RouteLimit(VERIFY_RATE_LIMIT)
  @ApiOperation({
    operationId: 'verifyMagicLink',
    summary: "Exchange a link's token for an end-user bearer token (once)",
    description: 'Each link signs in once, within 15 minutes of being sent.',
  })
  @ApiOkResponse({ type: EndUserSessionResponse, description: 'Signed in: an end-user token and the person' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS)
  @ApiErrorMessage(HttpStatus.UNAUTHORIZED, INVALID_LINK, 'The token is malformed, unknown, used or expired')
  @ApiErrorMessage(HttpStatus.FORBIDDEN, APP_INACTIVE, 'The app was switched off after the link was sent')
  async verify(@Body() dto: VerifyMagicLinkDto): Promise<EndUserSessionResponse> {
    const { token, user } = await this.magicLinks.verify(dto.token);
    return { success: true, token, user };
  }
}
