import { Injectable } from '@nestjs/common';
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { SecretKeys } from '../../config/secret-keys';

/** What a link token may be for; a token of one purpose never verifies as another (the purpose is signed). */
export type LinkPurpose = 'unsubscribe' | 'open' | 'click' | 'signup-confirm';

/** Longer path segments are refused before any hashing (tokens the service issues are far shorter). */
export const MAX_LINK_TOKEN_LENGTH = 512;
/** HMAC-SHA256 truncated to 128 bits: forging one is 2^128 work, and links in every e-mail stay short. */
const MAC_BYTES = 16;

/**
 * Signed, URL-safe tokens for links in e-mails (docs/architecture.md "Signed link tokens"):
 * `<payload>.<mac>`, both base64url, where the payload is the JSON array `[purpose, ...fields]` and the MAC
 * an HMAC of it with the derived `link-token` key. Tokens carry no expiry: an unsubscribe link must work as
 * long as the mail exists.
 */
@Injectable()
export class LinkTokens {
  /** A KeyObject: createHmac then skips importing the raw key on every call. */
  private readonly key: KeyObject;

  constructor(keys: SecretKeys) {
    this.key = createSecretKey(keys.linkToken);
  }

  sign(purpose: LinkPurpose, fields: readonly string[]): string {
    const payload = Buffer.from(JSON.stringify([purpose, ...fields])).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The fields of a genuine token of this purpose, or null (forged, altered, other purpose, malformed). */
  verify(purpose: LinkPurpose, token: string): string[] | null {
    if (typeof token !== 'string' || token.length > MAX_LINK_TOKEN_LENGTH) return null;
    const [payload, mac, ...rest] = token.split('.');
    if (!payload || !mac || rest.length > 0) return null;
    const given = strictBase64url(mac);
    // Compared in constant time; a MAC of another length cannot be genuine (and timingSafeEqual needs equal).
    if (!given || given.length !== MAC_BYTES || !timingSafeEqual(given, this.mac(payload))) return null;
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!Array.isArray(decoded) || decoded[0] !== purpose) return null;
    const fields = decoded.slice(1);
    return fields.every((field): field is string => typeof field === 'string') ? fields : null;
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

/**
 * The bytes of a base64url text that is the one spelling of them, else null. Node's decoder is lenient: it
 * skips padding and characters outside the alphabet and ignores the unused low bits of the last character,
 * so one MAC would have many accepted spellings (16 for the last character of a 16-byte MAC alone). Only
 * what encoding the bytes again gives back is accepted. The text is the caller's, not a secret: comparing
 * it in ordinary time reveals nothing.
 */
function strictBase64url(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}
