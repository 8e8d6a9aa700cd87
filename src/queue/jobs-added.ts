/**
 * Tells a kind's worker in this process that jobs became due in some lanes, so it runs them now instead of
 * at its next poll (a magic link does not wait up to `intervalMs` for the worker to look). It only hastens:
 * a worker in another process, or one that misses the signal, finds the jobs at its next poll as before.
 */
export class JobsAdded {
  private readonly listeners = new Set<(lane: string) => void>();

  /** Calls `listener` with each lane jobs are added to; returns the call that stops it. */
  listen(listener: (lane: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  announce(lanes: Iterable<string>): void {
    for (const lane of lanes) for (const listener of this.listeners) listener(lane);
  }
}
