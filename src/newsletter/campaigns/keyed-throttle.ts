interface KeyState {
  /** When the last run for this key started, and how long it took. */
  lastStartedAt: number;
  lastDurationMs: number;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  /** Requested while running: run once more when the current run ends (`urgent`: at once). */
  again: boolean;
  urgent: boolean;
}

/**
 * Runs `task(key)` at most once per `intervalMs` for each key, and always once after the last request: a
 * request while a run is waiting does nothing more (the waiting run reads the state when it starts), a
 * request while a run is in progress queues one more. Runs of one key never overlap. A run that took long
 * spaces the next one out further (start to start at least `costRatio` times its duration), so a task whose
 * cost grows with the data keeps to a fixed share of the time. A failing run is reported to `onError` and
 * does not stop later ones.
 */
export class KeyedThrottle {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly intervalMs: number,
    private readonly task: (key: string) => Promise<void>,
    private readonly onError: (key: string, error: unknown) => void,
    private readonly costRatio = 10,
    private readonly now: () => number = Date.now,
  ) {}

  /** `now`: start at once (after the run in progress, if any) instead of waiting for the spacing. */
  request(key: string, now = false): void {
    let state = this.keys.get(key);
    if (!state) {
      this.forgetIdle();
      state = { lastStartedAt: -Infinity, lastDurationMs: 0, again: false, urgent: false };
      this.keys.set(key, state);
    }
    if (state.running) {
      state.again = true;
      state.urgent ||= now;
      return;
    }
    if (state.timer && !now) return;
    if (now) {
      this.start(key);
      return;
    }
    const wait = Math.max(0, state.lastStartedAt + this.spacing(state) - this.now());
    state.timer = setTimeout(() => this.start(key), wait);
    // A waiting recount must not keep a process alive; shutdown runs it through `flush`.
    state.timer.unref();
  }

  /** Starts every waiting run now (and those they queue) and resolves when none is left. */
  async flush(): Promise<void> {
    for (;;) {
      for (const [key, state] of this.keys) if (state.timer) this.start(key);
      const running = [...this.keys.values()].flatMap((state) => (state.running ? [state.running] : []));
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  private start(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    clearTimeout(state.timer);
    state.timer = undefined;
    const startedAt = (state.lastStartedAt = this.now());
    state.running = this.task(key)
      .catch((error: unknown) => this.onError(key, error))
      .finally(() => {
        state.lastDurationMs = this.now() - startedAt;
        state.running = undefined;
        if (state.again || state.urgent) {
          const urgent = state.urgent;
          state.again = false;
          state.urgent = false;
          this.request(key, urgent);
        }
      });
  }

  /** Keys with nothing waiting or running whose interval has passed carry no state worth keeping. */
  private forgetIdle(): void {
    if (this.keys.size < 100) return;
    const now = this.now();
    for (const [key, state] of this.keys) {
      if (!state.timer && !state.running && now - state.lastStartedAt >= this.spacing(state))
        this.keys.delete(key);
    }
  }

  private spacing(state: KeyState): number {
    return Math.max(this.intervalMs, state.lastDurationMs * this.costRatio);
  }
}
