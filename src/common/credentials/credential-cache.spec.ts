import { CredentialCache } from './credential-cache';

describe('CredentialCache', () => {
  it('keeps at most its capacity, dropping the least recently used entry', () => {
    const cache = new CredentialCache<number>(['users'], 2);
    cache.store('a', 1, cache.generation);
    cache.store('b', 2, cache.generation);
    expect(cache.get('a')).toBe(1);
    cache.store('c', 3, cache.generation);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c')]).toEqual([1, 3]);
  });

  it('refuses an answer read before the cache was cleared', () => {
    const cache = new CredentialCache<string>(['api-keys'], 10);
    const before = cache.generation;
    cache.clear();
    cache.store('key-hash', 'read before the change', before);
    expect(cache.get('key-hash')).toBeUndefined();
    cache.store('key-hash', 'read after', cache.generation);
    expect(cache.get('key-hash')).toBe('read after');
  });
});
