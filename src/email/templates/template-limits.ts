/**
 * What a template may cost (docs/decisions/security-template-sandbox.md). The
 * length is checked where a template is saved; the rest is enforced by the template workers
 * (template-sandbox.ts) whatever the template says: a compile and render that runs past `renderMs` is
 * stopped (the worker is terminated), one that needs more than `heapMb` dies in its worker, and a rendered
 * field longer than `outputChars` is refused.
 */
export const TEMPLATE_LIMITS = {
  /** Characters of one field. Gmail clips HTML past ~100 KB anyway. */
  maxLength: 100_000,
  /**
   * Wall time of one worker call: the compile (when not cached) and the renders of one batch. Wall time, so
   * on a starved machine it leaves room: a newsletter's compile and render take a few ms of CPU.
   */
  renderMs: 2_000,
  /** Heap of one template worker (V8's old generation), compiled templates of its cache included. */
  heapMb: 96,
  /** Characters of one rendered field. */
  outputChars: 1_000_000,
} as const;

/** The budget as a 400 or a failed message says it. */
export const BUDGET_TEXT = `${TEMPLATE_LIMITS.renderMs} ms and ${TEMPLATE_LIMITS.heapMb} MB per render`;

/** A field over a limit, or one that does not compile or render; the message names the field. */
export class TemplateProblem extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'TemplateProblem';
  }
}

/** Throws a `TemplateProblem` when the author's source is too long (`addedChars`: characters we added). */
export function assertWithinLength(field: string, source: string, addedChars = 0): void {
  if (source.length - addedChars > TEMPLATE_LIMITS.maxLength)
    throw new TemplateProblem(field, `at most ${TEMPLATE_LIMITS.maxLength} characters`);
}
