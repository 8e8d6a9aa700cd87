import { Injectable } from '@nestjs/common';
import { createHmac, randomBytes } from 'node:crypto';
import { SecretKeys } from '../../config/secret-keys';

/** 256 random bits: guessing a live link is hopeless, so the token needs no signature of its own. */
const TOKEN_BYTES = 32;
/** What `randomBytes(32).toString('base64url')` looks like; anything else is refused before any lookup. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface IssuedToken {
  /** Goes into the e-mail only. */
  token: string;
  /** What the database keeps. */
  tokenHash: string;
}

/**
 * Magic-link tokens: random values whose HMAC (derived `magic-link` key) is all the database keeps. A token
 * is good for this purpose only because its hash is in `magic_link_tokens`: an unsubscribe link token or a
 * JWT neither has the shape nor, if it had, a stored hash.
 */
@Injectable()
export class MagicLinkTokens {
  private readonly key: Buffer;

  constructor(keys: SecretKeys) {
    this.key = keys.magicLink;
  }

  issue(): IssuedToken {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    return { token, tokenHash: this.hash(token) };
  }

  /** The stored hash a presented token would have, or null when it cannot be one of ours. */
  hashOf(token: string): string | null {
    return TOKEN_SHAPE.test(token) ? this.hash(token) : null;
  }

  /**
   * The key of an address's request counter: an HMAC, so the limiter's storage (Redis, later) never holds
   * an address. The `address` label keeps it apart from token hashes made with the same key.
   */
  addressKey(appId: string, email: string): string {
    return createHmac('sha256', this.key)
      .update(`address\u0000${appId}\u0000${email.trim().toLowerCase()}`)
      .digest('hex');
  }

  private hash(token: string): string {
    return createHmac('sha256', this.key).update(token).digest('hex');
  }
}
