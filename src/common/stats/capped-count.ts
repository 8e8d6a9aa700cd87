/**
 * Counts stop after this many matches: a count reads at most this many index keys, however large the
 * collection (docs/api/README.md "Paging", docs/operations/configuration.md "Health checks"). A figure
 * that reached it reads "at least", and the answer says so.
 */
export const COUNT_CAP = 10_000;

/** The `limit` to count with: one past the cap tells "exactly the cap" from "more". */
export const COUNT_LIMIT = COUNT_CAP + 1;

/** A count made with COUNT_LIMIT, as reported: the figure (at most the cap) and whether it stopped there. */
export function cappedCount(counted: number): { count: number; capped: boolean } {
  return counted > COUNT_CAP ? { count: COUNT_CAP, capped: true } : { count: counted, capped: false };
}
