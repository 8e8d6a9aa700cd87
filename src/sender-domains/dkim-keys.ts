import {
  createPrivateKey,
  generateKeyPair as generateKeyPairCallback,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { promisify } from 'node:util';
import { decryptSecret, encryptSecret } from '../common/crypto/secret-box';
import type { DkimKey } from './schemas/sender-domain.schema';

const generateKeyPair = promisify(generateKeyPairCallback);

/**
 * A fresh RSA-2048 DKIM key (the size receivers expect; 1024 is deprecated, 4096 does not fit one TXT
 * string on every DNS host). The selector names the key's month and a random part, so a rotation always
 * publishes a new name beside the old one.
 */
export async function newDkimKey(sealKey: Buffer, now = new Date()): Promise<DkimKey> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const month = now.toISOString().slice(0, 7).replace('-', '');
  return {
    selector: `s${month}-${randomBytes(3).toString('hex')}`,
    publicKey: publicKey.toString('base64'),
    sealedPrivateKey: encryptSecret(privateKey, sealKey),
    createdAt: now,
  };
}

/**
 * The signing key, parsed once: a key given to the signer as PEM text is parsed again for every message,
 * which doubled the CPU of a signed message (bench/README.md, "DKIM signing").
 */
export const openDkimKey = (key: DkimKey, sealKey: Buffer): KeyObject =>
  createPrivateKey(decryptSecret(key.sealedPrivateKey, sealKey));

/** The TXT value that publishes a key. */
export const dkimRecordValue = (key: DkimKey) => `v=DKIM1; k=rsa; p=${key.publicKey}`;
