import { crypto } from '@otplib/plugin-crypto-node';
import { generate } from '@otplib/totp';
import { base32, otpauthUri, totpStep } from './totp';

describe('TOTP', () => {
  it('encodes secrets in RFC 4648 base32 (the standard test vectors, unpadded)', () => {
    expect(base32(Buffer.from('f'))).toBe('MY');
    expect(base32(Buffer.from('fooba'))).toBe('MZXW6YTB');
    expect(base32(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
  });

  it('accepts the RFC 6238 code of a step (SHA-1 test secret) and answers that step', async () => {
    const secret = Buffer.from('12345678901234567890').toString('hex');
    const now = Math.floor(Date.now() / 1000);
    const code = await generate({ secret: Buffer.from(secret, 'hex'), crypto, epoch: now });
    expect(await totpStep(secret, code)).toBe(Math.floor(now / 30));
  });

  it('refuses a code of a step already used, and codes that are not 6 digits', async () => {
    const secret = Buffer.from('12345678901234567890').toString('hex');
    const code = await generate({ secret: Buffer.from(secret, 'hex'), crypto });
    const step = await totpStep(secret, code);
    expect(step).not.toBeNull();
    expect(await totpStep(secret, code, step!)).toBeNull();
    expect(await totpStep(secret, '12345')).toBeNull();
  });

  it('writes the otpauth URI with the base32 secret and the issuer', () => {
    const uri = otpauthUri('jane@example.com', Buffer.from('foobar').toString('hex'));
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    expect(uri).toContain('secret=MZXW6YTBOI');
    expect(uri).toContain('issuer=Admin');
  });
});
