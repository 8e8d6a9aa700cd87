import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LinkTokens } from '../../common/crypto/link-token';
import type { AppConfig } from '../../config/env';

/**
 * Confirmation links of held-back signups: signed tokens of their own purpose (`signup-confirm`, never
 * accepted as an unsubscribe, open or click token and the reverse) naming the pending signup, at
 * `PUBLIC_BASE_URL/joinlist/confirm/{token}`. How long one works is the pending signup's `expiresAt`.
 */
@Injectable()
export class SignupConfirmationLinks {
  private readonly baseUrl: string;

  constructor(
    private readonly tokens: LinkTokens,
    config: ConfigService<AppConfig, true>,
  ) {
    this.baseUrl = config.get('publicBaseUrl', { infer: true });
  }

  token(confirmationId: string): string {
    return this.tokens.sign('signup-confirm', [confirmationId]);
  }

  url(token: string): string {
    return `${this.baseUrl}/joinlist/confirm/${token}`;
  }

  /** The pending signup's id in a genuine token, or null. */
  read(token: string): string | null {
    const fields = this.tokens.verify('signup-confirm', token);
    return fields?.length === 1 ? fields[0] : null;
  }
}
