import type { AllowListEntry } from './index-coverage';

/**
 * Query shapes no index serves, on purpose. Each entry is the shape as `npm run db:coverage` prints it and
 * why reading without an index is acceptable there (docs/index-coverage.md). Keep it short: a shape belongs
 * here only when it is bounded (a small collection, a limit, a rare operator command), never on a hot path.
 */
export const INDEX_COVERAGE_ALLOW_LIST: AllowListEntry[] = [];
