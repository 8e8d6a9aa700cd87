import { Injectable } from '@nestjs/common';
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { SecretKeys } from '../../config/secret-keys';

/** What a link token may be for; a token of one purpose never verifies as another (the purpose is signed). */
export type LinkPurpose = 'unsubscribe' | 'open' | 'click' | 'signup-confirm';

/** Longer path segments are refused before any hashing (tokens the service issues are far shorter). */
export const MAX_LINK_TOKEN_LENGTH = 512;
/** HMAC-SHA256 truncated to 128 bits: forging one is 2^128 work, and links in every e-mail stay short. */
const MAC_BYTES = 16;
/** AES-256-GCM's nonce and tag, in front of a sealed token's ciphertext. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Signed, URL-safe tokens for links in e-mails (docs/architecture.md "Signed link tokens"):
 * `<payload>.<mac>`, both base64url, where the payload is the JSON array `[purpose, ...fields]` and the MAC
 * an HMAC of it with the derived `link-token` key. Tokens carry no expiry: an unsubscribe link must work as
 * long as the mail exists. A sealed token (`seal`) holds the same JSON encrypted, for links handed to someone
 * who must not read what they name.
 */
@Injectable()
export class LinkTokens {
  /** A KeyObject: createHmac then skips importing the raw key on every call. */
  private readonly key: KeyObject;
  private readonly sealKey: KeyObject;

  constructor(keys: SecretKeys) {
    this.key = createSecretKey(keys.linkToken);
    this.sealKey = createSecretKey(keys.linkSeal);
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
    return fieldsOf(decoded, purpose);
  }

  /**
   * An opaque token: `<iv><tag><ciphertext>` in one base64url segment (no `.`, so never read as a signed
   * one), AES-256-GCM with the derived `link-seal` key and a fresh nonce. Its holder learns nothing of its
   * fields, only their total length, and two seals of the same fields differ.
   */
  seal(purpose: LinkPurpose, fields: readonly string[]): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const plain = Buffer.from(JSON.stringify([purpose, ...fields]));
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
  }

  /** The fields of a genuine sealed token of this purpose, or null (forged, altered, other purpose). */
  open(purpose: LinkPurpose, token: string): string[] | null {
    if (typeof token !== 'string' || token.length > MAX_LINK_TOKEN_LENGTH) return null;
    const bytes = strictBase64url(token);
    if (!bytes || bytes.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      return fieldsOf(JSON.parse(plain.toString('utf8')), purpose);
    } catch {
      return null;
    }
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

/** The string fields after the purpose of a decoded token, when the purpose is this one; else null. */
function fieldsOf(decoded: unknown, purpose: LinkPurpose): string[] | null {
  if (!Array.isArray(decoded) || decoded[0] !== purpose) return null;
  const fields = decoded.slice(1) as unknown[];
  return fields.every((field): field is string => typeof field === 'string') ? fields : null;
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
