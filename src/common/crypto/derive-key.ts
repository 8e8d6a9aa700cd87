import { hkdfSync } from 'node:crypto';

/** Purposes of keys derived from APP_SECRET; a key of one purpose is never used for another. */
export type KeyPurpose =
  | 'jwt'
  | 'end-user-jwt'
  | 'api-key-encryption'
  | 'link-token'
  | 'link-seal'
  | 'magic-link'
  | 'suppression-address'
  | 'job-secret'
  | 'dkim-key-seal'
  | 'totp-secret'
  | 'verp';

const SALT = 'admin-service/v1';

/** HKDF-SHA256 of the master secret, one 32-byte key per purpose. */
export function deriveKey(masterSecret: string, purpose: KeyPurpose, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, SALT, purpose, length));
}
