import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret } from './secret-box';

describe('secret box (AES-256-GCM)', () => {
  const key = randomBytes(32);
  const secret = `sk_demo_${'ab'.repeat(32)}`;

  it('round-trips a value and never contains it in clear', () => {
    const sealed = encryptSecret(secret, key);
    expect(sealed).toMatch(/^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain('ab'.repeat(8));
    expect(decryptSecret(sealed, key)).toBe(secret);
  });

  it('uses a fresh IV each time', () => {
    const a = encryptSecret(secret, key);
    const b = encryptSecret(secret, key);
    expect(a).not.toBe(b);
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
  });

  it('refuses another key', () => {
    expect(() => decryptSecret(encryptSecret(secret, key), randomBytes(32))).toThrow();
  });

  it('refuses an altered ciphertext or tag', () => {
    const [version, iv, tag, ciphertext] = encryptSecret(secret, key).split('.');
    const flipped = (part: string) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[0] ^= 1;
      return bytes.toString('base64url');
    };
    expect(() => decryptSecret([version, iv, tag, flipped(ciphertext)].join('.'), key)).toThrow();
    expect(() => decryptSecret([version, iv, flipped(tag), ciphertext].join('.'), key)).toThrow();
  });

  it('refuses a malformed value', () => {
    expect(() => decryptSecret('v2.a.b.c', key)).toThrow('Unsupported');
    expect(() => decryptSecret('garbage', key)).toThrow('Unsupported');
  });
});
