import { createSecretKey, type KeyObject } from 'node:crypto';
import { deriveKey } from '../common/crypto/derive-key';

/**
 * The per-purpose keys, derived from APP_SECRET once at start-up (HKDF) and injected where they are used,
 * so no service reads the master secret itself and a key of one purpose never serves another.
 *
 * The JWT keys are KeyObjects: given a Buffer, jsonwebtoken first tries to parse it as a PEM public key on
 * every sign and verify, and the exception that attempt throws cost about a third of a request's CPU.
 */
export class SecretKeys {
  /** Signs back-office bearer tokens. */
  readonly jwt: KeyObject;
  /** Signs end-user (magic-link) bearer tokens: a key of its own, so neither kind verifies as the other. */
  readonly endUserJwt: KeyObject;
  /** Encrypts the stored copy of API key values (AES-256-GCM). */
  readonly apiKeyEncryption: Buffer;
  /** Signs open, click and unsubscribe links. */
  readonly linkToken: Buffer;
  /** Encrypts the links whose fields nobody may read (a public signup's unsubscribe link). */
  readonly linkSeal: Buffer;
  /** Hashes stored magic-link tokens. */
  readonly magicLink: Buffer;
  /** Keys suppression entries: an HMAC of the address, so a suppressed address is never stored itself. */
  readonly suppressionAddress: Buffer;
  /** Seals the secrets an e-mail job carries until its worker sends it (AES-256-GCM, JobSecrets). */
  readonly jobSecret: Buffer;
  /** Seals the private halves of sender domains' DKIM keys at rest (AES-256-GCM). */
  readonly dkimKeySeal: Buffer;
  /** Signs the VERP envelope senders, so a bounce report names only a message the service sent. */
  readonly verp: Buffer;
  /** Seals staff members' TOTP secrets at rest (AES-256-GCM): a database copy alone does not give codes. */
  readonly totpSecret: Buffer;

  constructor(masterSecret: string) {
    this.jwt = createSecretKey(deriveKey(masterSecret, 'jwt'));
    this.endUserJwt = createSecretKey(deriveKey(masterSecret, 'end-user-jwt'));
    this.apiKeyEncryption = deriveKey(masterSecret, 'api-key-encryption');
    this.linkToken = deriveKey(masterSecret, 'link-token');
    this.linkSeal = deriveKey(masterSecret, 'link-seal');
    this.magicLink = deriveKey(masterSecret, 'magic-link');
    this.suppressionAddress = deriveKey(masterSecret, 'suppression-address');
    this.jobSecret = deriveKey(masterSecret, 'job-secret');
    this.dkimKeySeal = deriveKey(masterSecret, 'dkim-key-seal');
    this.totpSecret = deriveKey(masterSecret, 'totp-secret');
    this.verp = deriveKey(masterSecret, 'verp');
  }
}
