/** One item's outcome in a batch: its value, or the error that fails only its caller. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };

export const settled = <T>(value: T): Settled<T> => ({ ok: true, value });
export const failed = <T>(error: unknown): Settled<T> => ({
  ok: false,
  error: error instanceof Error ? error : new Error(String(error)),
});

/**
 * Group commit: work submitted by concurrent requests is done together, one batch at a time. A batch starts
 * as soon as none is running (after the current turn of the event loop, so the requests that arrived
 * together go together); what arrives while it runs waits for it and forms the next one. An idle service
 * therefore adds no delay, and a busy one sends one set of database commands per batch instead of per
 * request. Nothing is held once answered: each caller's promise settles when its batch's writes are done,
 * so a success means stored, and a crash mid-batch fails (never answers) every request of that batch.
 */
export class GroupCommit<I, O> {
  private waiting: { item: I; settle: (outcome: Settled<O>) => void }[] = [];
  private running = false;

  /** `run` answers each item in order; a throw fails the whole batch. */
  constructor(
    private readonly run: (items: I[]) => Promise<Settled<O>[]>,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({
        item,
        settle: (outcome) => (outcome.ok ? resolve(outcome.value) : reject(outcome.error)),
      });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      let outcomes: Settled<O>[];
      try {
        outcomes = await this.run(batch.map(({ item }) => item));
      } catch (error) {
        outcomes = batch.map(() => failed<O>(error));
      }
      batch.forEach(({ settle }, i) =>
        settle(outcomes[i] ?? failed(new Error('No outcome for a batch item'))),
      );
    }
    this.running = false;
  }
}
