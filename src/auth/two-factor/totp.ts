import { crypto } from '@otplib/plugin-crypto-node';
import { verify } from '@otplib/totp';
import { generateTOTP } from '@otplib/uri';
import { randomBytes } from 'node:crypto';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
/** One step either side of now: a code typed just as it changed, or a clock a little off, still counts. */
const TOLERANCE_SECONDS = PERIOD_SECONDS;
const SECRET_BYTES = 20;
const ISSUER = 'Admin Service';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export const TOTP_CODE = /^\d{6}$/;

/**
 * A new random secret (160 bits, RFC 4226's recommendation), as hex: the form that is sealed and stored.
 * otplib checks codes against the bytes with Node's crypto; base32 is only what people and apps are shown.
 */
export const newTotpSecret = (): string => randomBytes(SECRET_BYTES).toString('hex');

/** RFC 4648 base32 without padding, the alphabet authenticator apps take a secret in. */
export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

/** The secret as people type it into an app (base32). */
export const displayedSecret = (secretHex: string) => base32(Buffer.from(secretHex, 'hex'));

/** The `otpauth://` URI an authenticator app reads (from the QR image or pasted). */
export const otpauthUri = (email: string, secretHex: string): string =>
  generateTOTP({ issuer: ISSUER, label: email, secret: displayedSecret(secretHex), period: PERIOD_SECONDS });

/**
 * The time step of `code` when it is valid now (±1 step) and later than `afterStep`, else null. The step
 * is what makes a code single-use: the caller records it and refuses it and every earlier one.
 */
export async function totpStep(secretHex: string, code: string, afterStep?: number): Promise<number | null> {
  if (!TOTP_CODE.test(code)) return null;
  const result = await verify({
    secret: Buffer.from(secretHex, 'hex'),
    token: code,
    crypto,
    period: PERIOD_SECONDS,
    epochTolerance: TOLERANCE_SECONDS,
    ...(afterStep === undefined ? {} : { afterTimeStep: afterStep }),
  });
  return result.valid ? result.timeStep : null;
}
