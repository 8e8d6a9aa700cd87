/**
 * Waiting in tests without timing pass marks (docs/development.md, "Writing tests"): a test waits for the
 * event or state it needs; a deadline only turns a hang into a readable failure, so it is generous (many
 * times what a loaded 2-core machine needs) and never what the test asserts.
 */

/** A generous safety net for one wait: far above what a loaded machine needs, below Jest's test limit. */
export const SAFETY_DEADLINE_MS = 60_000;

/**
 * For a stop given WORKER_SHUTDOWN_MS of 1 s: ending before this shows the setting was used, since without
 * it a stop waits up to the 30 s default.
 */
export const BELOW_DEFAULT_SHUTDOWN_MS = 25_000;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` until it returns true or `timeoutMs` passes, then fails with `describe()` (the state
 * that was waited on). Not a timing pass mark: the deadline is only a safety net.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number; describe: () => string | Promise<string> },
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? SAFETY_DEADLINE_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`Waited ${timeoutMs} ms in vain: ${await options.describe()}`);
    await sleep(options.intervalMs ?? 50);
  }
}

/**
 * Polls `count` until it reaches `target`. Fails only when the count has not grown for `stallMs` (default
 * the safety deadline): a loaded machine is slow but still progresses, a hang does not. For long batches
 * (a thousand messages) whose total time depends on how busy the machine is; the test's own Jest limit
 * must then allow for the batch (the stall check is what turns a hang into a readable failure).
 */
export async function waitForCount(
  count: () => number | Promise<number>,
  target: number,
  options: { stallMs?: number; intervalMs?: number; describe: () => string | Promise<string> },
): Promise<void> {
  const stallMs = options.stallMs ?? SAFETY_DEADLINE_MS;
  let best = -1;
  let grewAt = Date.now();
  for (;;) {
    const now = await count();
    if (now >= target) return;
    if (now > best) {
      best = now;
      grewAt = Date.now();
    } else if (Date.now() - grewAt > stallMs) {
      throw new Error(`Stuck at ${now} of ${target} for ${stallMs} ms: ${await options.describe()}`);
    }
    await sleep(options.intervalMs ?? 200);
  }
}

/**
 * Whether `work` settles (resolves or rejects) before the safety deadline. For "it ends although what it
 * waits on never answers": the test makes the other side never answer, so ending at all is the proof, and
 * the deadline only stops a broken build from hanging the file. The timer is cleared either way.
 */
export async function settles(work: Promise<unknown>, deadlineMs = SAFETY_DEADLINE_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      cap,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
