/** The limits of a FetchBudget: fetches per window for one client, and for everyone together. */
export interface FetchLimits {
  perClient: number;
  total: number;
  windowMs: number;
}

/**
 * How many outbound fetches requests may set off, counted in this process (what it guards, a cache of
 * fetched documents, is per process too): per fixed window, at most `perClient` for one client IP and `total`
 * for everyone. Only fetches are counted, so at most `total` clients are remembered at once.
 */
export class FetchBudget {
  private windowStart = 0;
  private used = 0;
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly limits: FetchLimits,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Takes one fetch for this client: null when granted, else the seconds until the window ends. */
  take(client: string): number | null {
    const now = this.now();
    if (now - this.windowStart >= this.limits.windowMs) {
      this.windowStart = now;
      this.used = 0;
      this.byClient.clear();
    }
    const byClient = this.byClient.get(client) ?? 0;
    if (byClient >= this.limits.perClient || this.used >= this.limits.total) {
      return Math.max(1, Math.ceil((this.windowStart + this.limits.windowMs - now) / 1000));
    }
    this.byClient.set(client, byClient + 1);
    this.used += 1;
    return null;
  }
}
