import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { AuthUser, CurrentUser } from '../../common/auth/current-user.decorator';
import { Access } from '../../common/auth/roles';
import { TwoFactorEnrolment } from '../../common/auth/two-factor-enrolment.decorator';
import { done, ok } from '../../common/http/envelope';
import { ApiDoneEnvelope, ApiErrorMessage, ApiErrors } from '../../common/swagger/envelope.decorators';
import { AuthService } from '../auth.service';
import {
  SecondFactorCodeDto,
  TwoFactorCodeDto,
  TwoFactorEnabledResponse,
  TwoFactorSetupResponse,
} from './dto/two-factor.dto';
import { NOTHING_TO_ENABLE, TwoFactorService } from './two-factor.service';

/** The signed-in user's own TOTP factor (docs/api/staff.md "Two-factor sign-in"). */
@ApiTags('Auth')
@Controller('auth/2fa')
@Authenticated(Access.SignedIn)
export class TwoFactorController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly auth: AuthService,
  ) {}

  @Post('setup')
  @TwoFactorEnrolment()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'setupTwoFactor',
    summary: 'Start enrolling: a new TOTP secret, its otpauth:// URI and a QR code (PNG data URL)',
  })
  @ApiOkResponse({ type: TwoFactorSetupResponse, description: 'Scan the QR code, then call enable' })
  async setup(@CurrentUser() user: AuthUser) {
    return ok(await this.twoFactor.setup(user), 'Add it to an authenticator app, then confirm a code');
  }

  @Post('enable')
  @TwoFactorEnrolment()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'enableTwoFactor',
    summary: 'Confirm a code of the new secret: two-factor sign-in is on; answers 10 recovery codes',
  })
  @ApiOkResponse({ type: TwoFactorEnabledResponse, description: 'On; earlier tokens ended, a new one given' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOTHING_TO_ENABLE)
  async enable(
    @CurrentUser() user: AuthUser,
    @Body() dto: TwoFactorCodeDto,
  ): Promise<TwoFactorEnabledResponse> {
    const recoveryCodes = await this.twoFactor.enable(user, dto.code.trim());
    const { twoFactorSetupRequired: _done, ...signedIn } = user;
    return { success: true, recoveryCodes, token: await this.auth.refresh(user), user: signedIn };
  }

  @Post('disable')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'disableTwoFactor',
    summary: 'Turn two-factor sign-in off (needs a current code)',
  })
  @ApiDoneEnvelope('Two-factor sign-in disabled')
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.TOO_MANY_REQUESTS)
  async disable(@CurrentUser() user: AuthUser, @Body() dto: SecondFactorCodeDto) {
    await this.twoFactor.disable(user, dto.code);
    return done('Two-factor sign-in disabled');
  }
}
