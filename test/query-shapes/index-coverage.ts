import { describeShape, type Literal, type QueryShape } from './query-shape';

/** A declared index as the analyser needs it: its keys in order and what limits its use. */
export interface CoverageIndex {
  collection: string;
  key: [string, number][];
  unique: boolean;
  /** Holds only documents with one of its fields: used only by a query that excludes the others. */
  sparse: boolean;
  /** Holds only documents matching this filter: used only by a query whose filter implies it. */
  partialFilter?: Record<string, unknown>;
  /** A TTL index: the server's expiry uses it even when no query does. */
  ttl: boolean;
}

/**
 * One allowance, with its reason. Either one shape as the report prints it (`describeShape`), or fields of a
 * collection that may be filtered outside the index (a shape passes when an index serves it without them;
 * a trailing `*` matches by prefix), or the same for the collection's counts, which then read the documents
 * they match (`countedOutsideIndex`: a count is never excused by an entry for lists), or sorts done in
 * memory over what an index selects (a shape whose sort leads with one of the fields passes when an index
 * serves its filter), or a whole collection that stays small.
 */
export type AllowListEntry =
  | { shape: string; reason: string }
  | { collection: string; filteredFields: string[]; reason: string }
  | { collection: string; countedOutsideIndex: string[]; reason: string }
  | { collection: string; sortedInMemory: string[]; alsoFiltered?: string[]; reason: string }
  | { collection: string; wholeCollection: true; reason: string };

const describeEntry = (entry: AllowListEntry) =>
  'shape' in entry
    ? entry.shape
    : 'filteredFields' in entry
      ? `${entry.collection}: filtered outside the index: ${entry.filteredFields.join(', ')}`
      : 'countedOutsideIndex' in entry
        ? `${entry.collection}: counted reading documents, filtered by ${entry.countedOutsideIndex.join(', ')}`
        : 'sortedInMemory' in entry
          ? `${entry.collection}: sorted in memory by ${entry.sortedInMemory.join(', ')}`
          : `${entry.collection}: every query`;

export type Verdict =
  | { kind: 'index'; index: CoverageIndex }
  | { kind: 'id' }
  | { kind: 'metadata' }
  | { kind: 'allowed'; reason: string; entry: string }
  | { kind: 'uncovered' };

export interface CoverageReport {
  shapes: { shape: QueryShape; verdict: Verdict }[];
  /** Declared indexes that served no recorded shape. */
  unused: CoverageIndex[];
  /** Allow-list entries that matched no recorded shape (stale, or not reached by this run). */
  unmatchedAllowances: AllowListEntry[];
}

const ID_INDEX = (collection: string): CoverageIndex => ({
  collection,
  key: [['_id', 1]],
  unique: true,
  sparse: false,
  ttl: false,
});

/** Commands that count: judged on their own, and served only when the index alone answers them. */
const COUNTS = new Set(['count', 'countDocuments']);

/** Fields the shape's filter guarantees to exist: compared with something no missing field matches. */
function guaranteed(shape: QueryShape): Set<string> {
  const missing = new Set(shape.mayBeMissing ?? []);
  return new Set(
    [...shape.equality, ...shape.range, ...(shape.scan ?? []), ...(shape.wideIn ?? [])].filter(
      (field) => !missing.has(field) && !field.startsWith('$'),
    ),
  );
}

const COMPARISONS: Record<string, (a: number | string, b: number | string) => boolean> = {
  $gt: (a, b) => a > b,
  $gte: (a, b) => a >= b,
  $lt: (a, b) => a < b,
  $lte: (a, b) => a <= b,
};

/** Whether every document the shape selects passes `condition` on `field` (false when unsure). */
function impliesCondition(shape: QueryShape, field: string, condition: unknown): boolean {
  const literals = shape.literals ?? {};
  const known = Object.prototype.hasOwnProperty.call(literals, field);
  const value: Literal | undefined = known ? literals[field] : undefined;
  const isOperators =
    condition !== null &&
    typeof condition === 'object' &&
    !Array.isArray(condition) &&
    Object.keys(condition).every((key) => key.startsWith('$'));
  if (!isOperators) return known && value === condition;
  return Object.entries(condition as Record<string, unknown>).every(([operator, argument]) => {
    if (operator === '$exists') return argument ? guaranteed(shape).has(field) : false;
    if (operator === '$eq') return known && value === argument;
    if (operator === '$in') return known && Array.isArray(argument) && argument.includes(value);
    const compare = COMPARISONS[operator];
    return (
      compare !== undefined &&
      known &&
      value !== null &&
      typeof value === typeof argument &&
      (typeof value === 'number' || typeof value === 'string') &&
      compare(value, argument as number | string)
    );
  });
}

/**
 * Whether the shape's filter implies a partial index's filter expression, as MongoDB's planner requires
 * before it uses the index: each clause must follow from the query's own predicates (`$exists: true` from
 * any predicate no missing field matches, a value from the same equality value). `$or` and `$type`
 * clauses are never taken as implied, so the gate errs towards "not served".
 */
export function impliesFilter(shape: QueryShape, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and') {
      return (
        Array.isArray(condition) &&
        condition.every((clause) => impliesFilter(shape, clause as Record<string, unknown>))
      );
    }
    if (key.startsWith('$')) return false;
    return impliesCondition(shape, key, condition);
  });
}

/**
 * An equality the partial index's own filter states with the same value (`type: 'email.batch.plan'`):
 * every document in the index passes it, so it needs no key of its own.
 */
function settledByFilter(index: CoverageIndex, shape: QueryShape, field: string): boolean {
  const stated = index.partialFilter?.[field];
  return (
    stated !== undefined &&
    !index.key.some(([key]) => key === field) &&
    impliesCondition(shape, field, stated)
  );
}

/** Whether the planner may use the index for the shape at all (sparse and partial indexes). */
function usable(index: CoverageIndex, shape: QueryShape): boolean {
  if (index.partialFilter && !impliesFilter(shape, index.partialFilter)) return false;
  if (!index.sparse) return true;
  const present = guaranteed(shape);
  return index.key.some(([field]) => present.has(field));
}

const sameSet = (fields: string[], wanted: Set<string>) =>
  fields.length === wanted.size && fields.every((field) => wanted.has(field));

/**
 * Whether an index serves the shape without a scan or an in-memory sort, in equality-sort-range order:
 * the equality fields first (any order), then the sort fields in order, all in the index's directions or
 * all reversed, then the range fields (any order); more index fields after them do no harm. A sort on a
 * field the filter pins is no sort, and a range on a sort field is served by the sort's position. A unique
 * index whose every field is pinned finds at most one document, whatever else the filter says.
 */
export function serves(index: CoverageIndex, shape: QueryShape): boolean {
  if (index.collection !== shape.collection) return false;
  if (shape.op === 'aggregate-stage' || !usable(index, shape)) return false;
  const fields = index.key.map(([field]) => field);
  const equality = new Set(shape.equality.filter((field) => !settledByFilter(index, shape, field)));
  const pinned = new Set(shape.equality.filter((field) => !shape.mayBeMissing?.includes(field)));
  if (index.unique && fields.every((field) => pinned.has(field))) return true;
  // A pattern no index bounds reads the whole index range in front of it: never served.
  if (shape.scan?.length) return false;
  const sort = shape.sort.filter(([field]) => !equality.has(field));
  const sorted = new Set(sort.map(([field]) => field));
  const range = new Set(
    [...shape.range, ...(shape.wideIn ?? [])].filter((field) => !equality.has(field) && !sorted.has(field)),
  );

  if (!sameSet(fields.slice(0, equality.size), equality)) return false;
  let at = equality.size;
  if (sort.length) {
    const keys = index.key.slice(at, at + sort.length);
    if (keys.length < sort.length) return false;
    const flip = Math.sign(keys[0][1]) * sort[0][1];
    const inOrder = sort.every(
      ([field, direction], i) => keys[i][0] === field && Math.sign(keys[i][1]) * direction === flip,
    );
    if (!inOrder) return false;
    at += sort.length;
  }
  if (!sameSet(fields.slice(at, at + range.size), range)) return false;
  // A shape with no predicate and no sort reads every document: no index makes that cheap.
  return equality.size + sort.length + range.size > 0;
}

const matchesField = (pattern: string, field: string) =>
  pattern.endsWith('*') ? field.startsWith(pattern.slice(0, -1)) : field === pattern;

/** The shape without the fields an entry lets be filtered outside the index. */
function withoutFiltered(shape: QueryShape, patterns: string[]): QueryShape {
  const kept = (field: string) => !patterns.some((pattern) => matchesField(pattern, field));
  return {
    ...shape,
    equality: shape.equality.filter(kept),
    range: shape.range.filter(kept),
    scan: shape.scan?.filter(kept),
    wideIn: shape.wideIn?.filter(kept),
  };
}

function servingIndex(shape: QueryShape, indexes: CoverageIndex[]): CoverageIndex | undefined {
  return [ID_INDEX(shape.collection), ...indexes].find((candidate) => serves(candidate, shape));
}

/** The allow-list entry that lets the shape pass, if any. */
function allowance(
  shape: QueryShape,
  indexes: CoverageIndex[],
  allowList: AllowListEntry[],
): AllowListEntry | undefined {
  return allowList.find((entry) => {
    if ('shape' in entry) return entry.shape === describeShape(shape);
    if (entry.collection !== shape.collection) return false;
    // A count reads all it matches, a list only a page: an entry for the collection's lists says nothing
    // about its counts. Counts are allowed by a shape, or by an entry for the collection's counts.
    if (COUNTS.has(shape.op) !== 'countedOutsideIndex' in entry) return false;
    if ('countedOutsideIndex' in entry) {
      return servingIndex(withoutFiltered(shape, entry.countedOutsideIndex), indexes) !== undefined;
    }
    if ('wholeCollection' in entry) return true;
    // Later stages filter or sort in memory whatever the first ones selected: one shape at a time too.
    if (shape.op === 'aggregate-stage') return false;
    if ('sortedInMemory' in entry) {
      // Another sort than the index's: fine when the filter is served, so only its matches are sorted.
      const [first] = shape.sort;
      return (
        first !== undefined &&
        entry.sortedInMemory.includes(first[0]) &&
        !!servingIndex(withoutFiltered({ ...shape, sort: [] }, entry.alsoFiltered ?? []), indexes)
      );
    }
    return servingIndex(withoutFiltered(shape, entry.filteredFields), indexes) !== undefined;
  });
}

function verdictOf(shape: QueryShape, indexes: CoverageIndex[], allowList: AllowListEntry[]): Verdict {
  const empty = !shape.equality.length && !shape.sort.length && !shape.range.length && !shape.scan?.length;
  // A count with no filter is answered from the collection's metadata (estimatedDocumentCount).
  if (shape.op === 'count' && empty) return { kind: 'metadata' };
  if (shape.equality.includes('_id') && !shape.mayBeMissing?.includes('_id')) return { kind: 'id' };
  // A count reads every match: cheap only when the index alone answers it ($elemMatch reads documents).
  const indexOnly = !COUNTS.has(shape.op) || !shape.elemMatch?.length;
  const index = indexOnly ? servingIndex(shape, indexes) : undefined;
  if (index) {
    return index.key.length === 1 && index.key[0][0] === '_id' ? { kind: 'id' } : { kind: 'index', index };
  }
  const entry = allowance(shape, indexes, allowList);
  return entry
    ? { kind: 'allowed', reason: entry.reason, entry: describeEntry(entry) }
    : { kind: 'uncovered' };
}

/** Every recorded shape judged against the declared indexes and the allow-list; unused indexes named. */
export function analyseCoverage(
  shapes: QueryShape[],
  indexes: CoverageIndex[],
  allowList: AllowListEntry[],
): CoverageReport {
  const judged = shapes
    .map((shape) => ({ shape, verdict: verdictOf(shape, indexes, allowList) }))
    .sort((a, b) => describeShape(a.shape).localeCompare(describeShape(b.shape)));
  const used = new Set<CoverageIndex>();
  for (const { shape } of judged) {
    for (const index of indexes) if (serves(index, shape)) used.add(index);
  }
  const usedEntries = new Set(
    judged.map(({ verdict }) => (verdict.kind === 'allowed' ? verdict.entry : undefined)),
  );
  return {
    shapes: judged,
    unused: indexes.filter((index) => !used.has(index)),
    unmatchedAllowances: allowList.filter((entry) => !usedEntries.has(describeEntry(entry))),
  };
}

export const describeIndexKey = (index: CoverageIndex) =>
  `${index.collection} { ${index.key.map(([field, direction]) => `${field}: ${direction}`).join(', ')} }`;

/** Why an index that serves no query may still be needed. */
const keptFor = (index: CoverageIndex) =>
  index.ttl
    ? ' (TTL: the server expires documents with it)'
    : index.unique
      ? ' (unique: enforces a rule)'
      : '';

/** The lines `npm run db:coverage` prints and the gate quotes. */
export function formatReport(report: CoverageReport): string[] {
  const count = (kind: Verdict['kind']) => report.shapes.filter(({ verdict }) => verdict.kind === kind);
  const served = report.shapes.length - count('allowed').length - count('uncovered').length;
  const lines = [
    `Query shapes recorded: ${report.shapes.length}`,
    `  served by a declared index: ${count('index').length}`,
    `  served by _id: ${count('id').length}`,
    `  answered from collection metadata (count without filter): ${count('metadata').length}`,
    `  index-served in all: ${served}`,
    `  allow-listed: ${count('allowed').length}`,
    `  uncovered: ${count('uncovered').length}`,
  ];
  if (count('uncovered').length) {
    lines.push(
      '',
      'Uncovered shapes (declare an index in equality-sort-range order, or allow-list with a reason):',
    );
    for (const { shape } of count('uncovered')) lines.push(`  ${describeShape(shape)}`);
  }
  if (count('allowed').length) {
    lines.push('', 'Allow-listed shapes (the entry, then its reason):');
    for (const { shape, verdict } of count('allowed')) {
      if (verdict.kind !== 'allowed') continue;
      lines.push(`  ${describeShape(shape)}`, `      by ${verdict.entry}: ${verdict.reason}`);
    }
  }
  lines.push('', `Declared indexes that served no recorded shape: ${report.unused.length}`);
  for (const index of report.unused) lines.push(`  ${describeIndexKey(index)}${keptFor(index)}`);
  if (report.unmatchedAllowances.length) {
    lines.push('', 'Allow-list entries no recorded shape matched:');
    for (const entry of report.unmatchedAllowances) lines.push(`  ${describeEntry(entry)}`);
  }
  return lines;
}
