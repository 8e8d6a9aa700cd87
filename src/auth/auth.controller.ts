import { Body, Controller, Get, HttpCode, HttpStatus, NotFoundException, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { noteAuditActor } from '../audit/audit-actor';
import { bearerToken } from '../common/auth/bearer-token';
import { TwoFactorEnrolment } from '../common/auth/two-factor-enrolment.decorator';
import { done } from '../common/http/envelope';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { AuthUser, CurrentUser } from '../common/auth/current-user.decorator';
import { Public } from '../common/auth/public.decorator';
import { Access } from '../common/auth/roles';
import { ApiDoneEnvelope, ApiErrors } from '../common/swagger/envelope.decorators';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/env';
import { AuthService } from './auth.service';
import { HashPasswordDto, HashResponse, LoginDto, MeResponse, TokenResponse } from './dto/auth.dto';
import { AcceptsBody, PUBLIC_BODY_BYTES } from '../common/http/body/body-policy';
import { RouteLimit } from '../common/http/rate-limit';

/** Login attempts per minute per client IP. */
const LOGIN_RATE_LIMIT = 10;

@ApiTags('Auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  @Post('login')
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @Public()
  @HttpCode(HttpStatus.OK)
  @RouteLimit(LOGIN_RATE_LIMIT)
  @ApiOperation({
    operationId: 'login',
    summary: 'Back-office login with e-mail and password, and `code` when two-factor sign-in is on',
    description:
      'With two-factor sign-in on and no `code` (or a wrong one) the answer is 401 with ' +
      '`twoFactorRequired: true`: send the request again with the authenticator code or a recovery code.',
  })
  @ApiOkResponse({ type: TokenResponse, description: 'Signed in: a bearer token and the user' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED, HttpStatus.TOO_MANY_REQUESTS)
  async login(@Body() dto: LoginDto, @Req() request: FastifyRequest): Promise<TokenResponse> {
    const { token, user } = await this.auth.login(dto, (actor) => noteAuditActor(request, actor));
    return { success: true, token, user };
  }

  @Post('logout')
  @Authenticated(Access.SignedIn)
  @TwoFactorEnrolment()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'logout',
    summary: 'Sign out: the token sent stops working on every instance (other sessions go on)',
  })
  @ApiDoneEnvelope('Signed out')
  async logout(@CurrentUser() user: AuthUser, @Req() request: FastifyRequest) {
    // The guard accepted this very header, so it holds a token.
    await this.auth.logout(user, bearerToken(request)!);
    return done('Signed out');
  }

  @Post('refresh')
  @Authenticated(Access.SignedIn)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ operationId: 'refreshToken', summary: 'A fresh token for a still-valid one' })
  @ApiOkResponse({ type: TokenResponse, description: 'A new bearer token and the user' })
  async refresh(@CurrentUser() user: AuthUser): Promise<TokenResponse> {
    return { success: true, token: await this.auth.refresh(user), user };
  }

  @Get('me')
  @Authenticated(Access.SignedIn)
  @TwoFactorEnrolment()
  @ApiOperation({ operationId: 'getMe', summary: 'The signed-in user' })
  @ApiOkResponse({ type: MeResponse, description: 'The user the token belongs to' })
  me(@CurrentUser() user: AuthUser): MeResponse {
    return { success: true, user };
  }

  @Post('hash-password')
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @Public()
  @HttpCode(HttpStatus.OK)
  @RouteLimit(LOGIN_RATE_LIMIT)
  @ApiOperation({
    operationId: 'hashPassword',
    summary: 'Development helper: bcrypt hash of a password (404 in production)',
  })
  @ApiOkResponse({ type: HashResponse, description: 'The bcrypt hash of the password' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.TOO_MANY_REQUESTS)
  async hashPassword(@Body() dto: HashPasswordDto): Promise<HashResponse> {
    if (this.config.get('NODE_ENV', { infer: true }) === 'production')
      throw new NotFoundException('Cannot POST /auth/hash-password');
    return { hash: await this.auth.hashPassword(dto.password) };
  }
}
