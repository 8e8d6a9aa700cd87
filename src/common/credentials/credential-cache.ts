/** What a cache's entries were read from: a change to any of these collections drops them. */
export type CredentialSource = 'users' | 'api-keys' | 'apps';

/**
 * A bounded map of verified credentials, least recently used first out (a Map keeps insertion order; a hit
 * moves its entry to the end). Keys are hashes or record ids, never a secret as sent. `CredentialChanges`
 * clears it when one of its sources changes, and `generation` lets a lookup that read the database before
 * such a change see that its answer is already stale, so it never stores it.
 */
export class CredentialCache<V> {
  private readonly entries = new Map<string, V>();
  private generationCount = 0;

  constructor(
    readonly sources: readonly CredentialSource[],
    private readonly capacity: number,
  ) {}

  /** Changes each time the cache is cleared: read it before a database lookup, hand it to `store`. */
  get generation(): number {
    return this.generationCount;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Keeps `value` unless the cache was cleared since `generation` was read (the value may be stale). */
  store(key: string, value: V, generation: number): void {
    if (generation !== this.generationCount) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  clear(): void {
    this.generationCount += 1;
    this.entries.clear();
  }
}
