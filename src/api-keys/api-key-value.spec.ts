import { createHash } from 'node:crypto';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-value';

describe('API key values', () => {
  it('are sk_<appId>_<64 hex>, different each time', () => {
    const a = generateApiKey('my-app');
    expect(a).toMatch(/^sk_my-app_[0-9a-f]{64}$/);
    expect(generateApiKey('my-app')).not.toBe(a);
    expect(isWellFormedApiKey(a)).toBe(true);
  });

  it('hash to their SHA-256 hex digest', () => {
    const value = generateApiKey('x');
    expect(hashApiKey(value)).toBe(createHash('sha256').update(value).digest('hex'));
    expect(hashApiKey(value)).not.toBe(hashApiKey(generateApiKey('x')));
  });

  it.each([
    '',
    'sk_app_123',
    `pk_app_${'a'.repeat(64)}`,
    `sk_App_${'a'.repeat(64)}`,
    `sk_app_${'A'.repeat(64)}`,
  ])('rejects malformed value %p', (value) => expect(isWellFormedApiKey(value)).toBe(false));
});
