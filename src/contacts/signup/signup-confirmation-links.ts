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

  /** The app rides in the token so a link domain can refuse another app's link without a read. */
  token(confirmationId: string, appId: string): string {
    return this.tokens.sign('signup-confirm', [confirmationId, appId]);
  }

  /** `base`: the app's link domain (LinkDomains.baseUrlOf), PUBLIC_BASE_URL when absent. */
  url(token: string, base = this.baseUrl): string {
    return `${base}/joinlist/confirm/${token}`;
  }

  /** The pending signup's id and app in a genuine token (links mailed before apps rode in it: no app). */
  read(token: string): { id: string; appId?: string } | null {
    const fields = this.tokens.verify('signup-confirm', token);
    if (fields?.length === 1) return { id: fields[0] };
    return fields?.length === 2 ? { id: fields[0], appId: fields[1] } : null;
  }
}
