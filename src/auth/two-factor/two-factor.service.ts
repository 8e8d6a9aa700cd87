import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import * as QRCode from 'qrcode';
import type { AuthUser } from '../../common/auth/current-user.decorator';
import { RetryLaterException } from '../../common/http/retry-later.exception';
import { decryptSecret, encryptSecret } from '../../common/crypto/secret-box';
import { SecretKeys } from '../../config/secret-keys';
import { StaffCredentialsService } from '../../users/staff-credentials.service';
import type { TwoFactorState } from '../../users/schemas/user.schema';
import { newRecoveryCodes, RECOVERY_CODE, recoveryCodeHash } from './recovery-codes';
import { displayedSecret, newTotpSecret, otpauthUri, totpStep } from './totp';

/** The 409 of `POST /auth/2fa/enable` before any set-up. */
export const NOTHING_TO_ENABLE = 'Nothing to enable: call POST /auth/2fa/setup first';

/** Code attempts per account within the window, whichever IPs they come from (docs/api/staff.md). */
export const CODE_ATTEMPTS_PER_ACCOUNT = 10;
const CODE_WINDOW_MS = 15 * 60_000;
const THROTTLER_NAME = 'two-factor-code';

export const INVALID_CODE = 'Invalid two-factor code';

/** The 401 of a sign-in whose password was right but whose second factor is missing or wrong. */
export class TwoFactorRequiredException extends UnauthorizedException {
  constructor(message: string) {
    super({ message, twoFactorRequired: true });
  }
}

export interface TwoFactorSetup {
  secret: string;
  otpauthUri: string;
  /** The URI as a QR code, a PNG data URL (Swagger UI shows it as a link to open). */
  qrCode: string;
}

/**
 * TOTP enrolment and code checks. The secret is sealed before it is stored and opened only here to check
 * a code; it is answered once, by `setup`, and appears in no view or log. docs/api/staff.md.
 */
@Injectable()
export class TwoFactorService {
  constructor(
    private readonly credentials: StaffCredentialsService,
    private readonly keys: SecretKeys,
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
  ) {}

  /** A new secret, held as pending until `enable` confirms a code of it; an enabled factor is kept. */
  async setup(user: AuthUser): Promise<TwoFactorSetup> {
    const secret = newTotpSecret();
    await this.credentials.storePendingSecret(user.id, encryptSecret(secret, this.keys.totpSecret));
    const uri = otpauthUri(user.email, secret);
    return { secret: displayedSecret(secret), otpauthUri: uri, qrCode: await QRCode.toDataURL(uri) };
  }

  /** Confirms the pending secret with a code of it; answers the recovery codes (shown this once). */
  async enable(user: AuthUser, code: string): Promise<string[]> {
    const state = await this.credentials.twoFactorOf(user.id);
    if (!state?.pendingSecret) {
      throw new ConflictException(NOTHING_TO_ENABLE);
    }
    await this.countAttempt(user.id);
    const step = await totpStep(this.open(state.pendingSecret), code);
    if (step === null) throw new BadRequestException(`code: ${INVALID_CODE.toLowerCase()}`);
    const codes = newRecoveryCodes();
    const enabled = await this.credentials.enable(
      user.id,
      state.pendingSecret,
      step,
      codes.map(recoveryCodeHash),
    );
    if (!enabled) throw new ConflictException('The set-up changed meanwhile: enter a code of the newest one');
    return codes;
  }

  /** Turns the factor off after a valid code (TOTP or recovery), so a stolen session alone cannot. */
  async disable(user: AuthUser, code: string): Promise<void> {
    await this.checkCode(user.id, code, (message) => new BadRequestException(`code: ${message}`));
    await this.credentials.removeFactor(user.id, false);
  }

  /** An admin's reset of another user's factor: it is removed and that user's tokens end. */
  reset(userId: string): Promise<void> {
    return this.credentials.removeFactor(userId, true);
  }

  /** The second step of a sign-in: a TOTP code not used before, or an unused recovery code. */
  async checkLoginCode(userId: string, code: string | undefined): Promise<void> {
    if (!code) throw new TwoFactorRequiredException('A two-factor code is required: send it as `code`');
    await this.checkCode(userId, code, (message) => new TwoFactorRequiredException(message));
  }

  private async checkCode(userId: string, code: string, refuse: (message: string) => Error): Promise<void> {
    const state = await this.credentials.twoFactorOf(userId);
    if (!state?.secret) throw refuse('Two-factor sign-in is not enabled');
    await this.countAttempt(userId);
    if (await this.accepts(userId, state, code)) return;
    throw refuse(INVALID_CODE);
  }

  private async accepts(userId: string, state: TwoFactorState, code: string): Promise<boolean> {
    if (RECOVERY_CODE.test(code)) {
      return this.credentials.useRecoveryCode(userId, recoveryCodeHash(code));
    }
    const step = await totpStep(this.open(state.secret!), code.trim(), state.lastStep);
    // The conditional write, not the read above, decides a race between two requests with one code.
    return step !== null && (await this.credentials.claimStep(userId, step));
  }

  /**
   * Every code attempt counts against the account, from whichever IP, in the throttler's storage (shared by
   * the instances when REDIS_URL is set): the per-IP login limit alone lets many IPs guess six digits.
   */
  private async countAttempt(userId: string): Promise<void> {
    const { isBlocked, timeToBlockExpire } = await this.storage.increment(
      `${THROTTLER_NAME}:${userId}`,
      CODE_WINDOW_MS,
      CODE_ATTEMPTS_PER_ACCOUNT,
      CODE_WINDOW_MS,
      THROTTLER_NAME,
    );
    if (isBlocked) {
      throw new RetryLaterException('Too many two-factor codes tried for this account', timeToBlockExpire);
    }
  }

  private open(sealed: string): string {
    return decryptSecret(sealed, this.keys.totpSecret);
  }
}
