import { Injectable } from '@nestjs/common';
import { decryptSecret, encryptSecret } from '../../common/crypto/secret-box';
import { SecretKeys } from '../../config/secret-keys';

/** Named secret values of one message (a sign-in token, say). */
export type MessageSecrets = Record<string, string>;

/**
 * Seals the secrets a queued message carries (docs/decisions/security-secrets-in-jobs.md): the
 * enqueuing module seals them into `EmailMessage.sealed` and the composer that renders the message opens
 * them when the worker sends it, so `email_jobs`, its backups and every job view hold only ciphertext.
 * AES-256-GCM with a key derived for this purpose alone; a tampered or foreign value fails to open rather
 * than yielding a wrong secret.
 */
@Injectable()
export class JobSecrets {
  private readonly key: Buffer;

  constructor(keys: SecretKeys) {
    this.key = keys.jobSecret;
  }

  seal(secrets: MessageSecrets): string {
    return encryptSecret(JSON.stringify(secrets), this.key);
  }

  /** The secrets, or null when the value is missing, malformed, altered or sealed with another key. */
  open(sealed: unknown): MessageSecrets | null {
    if (typeof sealed !== 'string') return null;
    let decoded: unknown;
    try {
      decoded = JSON.parse(decryptSecret(sealed, this.key));
    } catch {
      return null;
    }
    if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) return null;
    const entries = Object.entries(decoded);
    return entries.every(([, value]) => typeof value === 'string') ? Object.fromEntries(entries) : null;
  }
}
