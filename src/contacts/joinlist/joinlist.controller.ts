import { Body, Controller, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../apps/schemas/app.schema';
import { AppKeyAuth, CurrentApp } from '../../common/auth/app-key-auth.decorator';
import { AcceptsBody, PUBLIC_BODY_BYTES } from '../../common/http/body/body-policy';
import { clientIp } from '../../common/http/client-ip';
import { RouteLimit } from '../../common/http/rate-limit';
import { ApiErrorMessage, ApiErrors } from '../../common/swagger/envelope.decorators';
import { UNDELIVERABLE_ADDRESS } from '../../email/suppression/undeliverable-address';
import { JoinlistDto, JoinlistResult } from './joinlist.dto';
import { JoinlistService } from './joinlist.service';

/** Signups per minute per client IP (spec "Limits"). */
export const JOINLIST_RATE_LIMIT = 10;

@ApiTags('Joinlist')
@Controller('joinlist')
export class JoinlistController {
  constructor(private readonly joinlist: JoinlistService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @AppKeyAuth()
  @RouteLimit(JOINLIST_RATE_LIMIT)
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @ApiOperation({
    operationId: 'joinNewsletter',
    summary: "Newsletter signup from a web page (the app's publishable key and a matching Origin)",
  })
  @ApiOkResponse({
    type: JoinlistResult,
    description: 'The signup is recorded (or waits for its confirmation)',
  })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS)
  @ApiErrorMessage(HttpStatus.UNPROCESSABLE_ENTITY, UNDELIVERABLE_ADDRESS, 'The address hard-bounced')
  join(@Body() dto: JoinlistDto, @CurrentApp() app: App, @Req() request: FastifyRequest) {
    return this.joinlist.join(app, dto, { ip: clientIp(request) });
  }
}
