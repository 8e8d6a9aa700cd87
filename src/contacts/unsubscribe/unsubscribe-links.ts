import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LinkTokens } from '../../common/crypto/link-token';
import type { AppConfig } from '../../config/env';

/** Whom an unsubscribe token names: one person's subscription to one app. */
export interface UnsubscribeTarget {
  contactId: string;
  appId: string;
}

/**
 * Unsubscribe links (DESIGN "Unsubscribe"): signed tokens of purpose `unsubscribe` naming a person and an
 * app, without expiry, at `PUBLIC_BASE_URL/unsubscribe/{token}` (the page, and the RFC 8058 one-click target).
 */
@Injectable()
export class UnsubscribeLinks {
  private readonly baseUrl: string;

  constructor(
    private readonly tokens: LinkTokens,
    config: ConfigService<AppConfig, true>,
  ) {
    this.baseUrl = config.get('publicBaseUrl', { infer: true });
  }

  token(target: UnsubscribeTarget): string {
    return this.tokens.sign('unsubscribe', [target.contactId, target.appId]);
  }

  url(target: UnsubscribeTarget): string {
    return `${this.baseUrl}/unsubscribe/${this.token(target)}`;
  }

  /** The target of a genuine token, or null. */
  read(token: string): UnsubscribeTarget | null {
    const fields = this.tokens.verify('unsubscribe', token);
    if (!fields || fields.length !== 2) return null;
    const [contactId, appId] = fields;
    return { contactId, appId };
  }
}
