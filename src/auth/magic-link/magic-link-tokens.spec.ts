import { createHmac } from 'node:crypto';
import { LinkTokens } from '../../common/crypto/link-token';
import { SecretKeys } from '../../config/secret-keys';
import { MagicLinkTokens } from './magic-link-tokens';

const keys = new SecretKeys('magic-link-spec-secret-that-is-long-enough');
const tokens = new MagicLinkTokens(keys);

describe('MagicLinkTokens', () => {
  it('issues 256-bit base64url tokens and keeps only their HMAC with the magic-link key', () => {
    const { token, tokenHash } = tokens.issue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(tokenHash).toBe(createHmac('sha256', keys.magicLink).update(token).digest('hex'));
    expect(tokenHash).not.toContain(token);
    expect(tokens.hashOf(token)).toBe(tokenHash);
  });

  it('issues a different token each time', () => {
    const issued = new Set(Array.from({ length: 100 }, () => tokens.issue().token));
    expect(issued.size).toBe(100);
  });

  it('has no hash for what cannot be one of its tokens', () => {
    const unsubscribe = new LinkTokens(keys).sign('unsubscribe', ['665f1c0a9d3e4b2a1c0d9e8f', 'shop']);
    for (const value of [
      '',
      'short',
      `${tokens.issue().token}x`,
      unsubscribe,
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
      'kq3Z6d0x1mS8v2b7yQ5wN4tE9rU0iO3pA6sD8fG1h+/',
    ]) {
      expect(tokens.hashOf(value)).toBeNull();
    }
  });

  it('keys an address counter by app and address, not by its spelling, and never in clear', () => {
    const key = tokens.addressKey('shop', 'Ada@Example.com ');
    expect(key).toBe(tokens.addressKey('shop', 'ada@example.com'));
    expect(key).not.toBe(tokens.addressKey('blog', 'ada@example.com'));
    expect(key).toMatch(/^[0-9a-f]{64}$/);
  });
});
