import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM encryption of short secrets the service must be able to read again (API key values, the
 * secrets an e-mail job carries until it is sent).
 * Output: `v1.<iv>.<tag>.<ciphertext>` (base64url); a fresh 12-byte IV per encryption, the 16-byte auth
 * tag checked on decryption, so a tampered or foreign value fails instead of decrypting to garbage.
 */
const VERSION = 'v1';
const IV_BYTES = 12;

export function encryptSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The clear value; throws when the value is malformed, was encrypted with another key, or was altered. */
export function decryptSecret(sealed: string, key: Buffer): string {
  const [version, iv, tag, ciphertext, ...rest] = sealed.split('.');
  if (version !== VERSION || ciphertext === undefined || rest.length > 0) {
    throw new Error('Unsupported encrypted value');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}
