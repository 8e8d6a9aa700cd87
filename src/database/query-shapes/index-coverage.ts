import { describeShape, type QueryShape } from './query-shape';

/** A declared index as the analyser needs it: its keys in order and what limits its use. */
export interface CoverageIndex {
  collection: string;
  key: [string, number][];
  unique: boolean;
  /** Sparse or partial: holds only some documents, so it serves only filters on its leading field. */
  partial: boolean;
  /** A TTL index: the server's expiry uses it even when no query does. */
  ttl: boolean;
}

/**
 * One allowance, with its reason. Either one shape as the report prints it (`describeShape`), or fields of a
 * collection that may be filtered outside the index (a shape passes when an index serves it without them;
 * a trailing `*` matches by prefix), or sorts done in memory over what an index selects (a shape whose sort
 * leads with one of the fields passes when an index serves its filter), or a whole collection that stays
 * small.
 */
export type AllowListEntry =
  | { shape: string; reason: string }
  | { collection: string; filteredFields: string[]; reason: string }
  | { collection: string; sortedInMemory: string[]; alsoFiltered?: string[]; reason: string }
  | { collection: string; wholeCollection: true; reason: string };

const describeEntry = (entry: AllowListEntry) =>
  'shape' in entry
    ? entry.shape
    : 'filteredFields' in entry
      ? `${entry.collection}: filtered outside the index: ${entry.filteredFields.join(', ')}`
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
  partial: false,
  ttl: false,
});

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
  const fields = index.key.map(([field]) => field);
  const equality = new Set(shape.equality);
  if (index.unique && fields.every((field) => equality.has(field))) return true;
  const sort = shape.sort.filter(([field]) => !equality.has(field));
  const sorted = new Set(sort.map(([field]) => field));
  const range = new Set(shape.range.filter((field) => !equality.has(field) && !sorted.has(field)));
  if (index.partial && !equality.has(fields[0]) && !range.has(fields[0])) return false;

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
  return { ...shape, equality: shape.equality.filter(kept), range: shape.range.filter(kept) };
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
    if ('wholeCollection' in entry) return true;
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
  const empty = !shape.equality.length && !shape.sort.length && !shape.range.length;
  // A count with no filter is answered from the collection's metadata (estimatedDocumentCount).
  if (shape.op === 'count' && empty) return { kind: 'metadata' };
  if (shape.equality.includes('_id')) return { kind: 'id' };
  const index = servingIndex(shape, indexes);
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
