import { createHash, randomBytes } from 'node:crypto';

/** `sk_<appId>_<64 hex>`: the app is readable in the value, the 32 random bytes are the secret. */
export const API_KEY_FORMAT = /^sk_([a-z0-9][a-z0-9-]*)_([0-9a-f]{64})$/;

export function generateApiKey(appId: string): string {
  return `sk_${appId}_${randomBytes(32).toString('hex')}`;
}

/**
 * SHA-256 of the value, the lookup column. A fast hash is enough (no bcrypt): the value carries 256 random
 * bits, so it cannot be guessed from its hash, and the check is one indexed lookup per request.
 */
export function hashApiKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_FORMAT.test(value);
}
