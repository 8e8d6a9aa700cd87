/**
 * A query's shape: which fields it compares for equality, sorts on and bounds by a range, with every value
 * dropped. Built from the commands the MongoDB driver sends, so it is what the database is asked, whatever
 * code built the query. docs/operations/index-coverage.md says what each part means.
 */
export interface QueryShape {
  collection: string;
  /** The command that carried it (`find`, `aggregate`, `update`, `delete`, `findAndModify`, `count`, ...). */
  op: string;
  /** Compared for equality (a plain value, `$eq`, `$in`, `$exists: false`), sorted by name. */
  equality: string[];
  /** The sort in order: field and direction. */
  sort: [string, 1 | -1][];
  /** Bounded otherwise (`$gt`, `$ne`, `$regex`, `$exists: true`, ...), sorted by name; `$expr` and the like too. */
  range: string[];
}

type Doc = Record<string, unknown>;

interface Predicates {
  equality: Set<string>;
  range: Set<string>;
  /** Each `$or` met: one list of branches. */
  ors: Doc[][];
}

/** Operators that pin a field to known values: the index scan stays a set of points. */
const EQUALITY_OPERATORS = new Set(['$eq', '$in']);
/** Top-level keys that are no predicate at all. */
const IGNORED_TOP_LEVEL = new Set(['$comment']);

const isPlainObject = (value: unknown): value is Doc =>
  value !== null &&
  typeof value === 'object' &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);

/** `{ $gt: 1 }`, not `{ city: 'x' }` (an exact sub-document, which is an equality). */
const isOperatorObject = (value: unknown): value is Doc => {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
};

/** A regular expression given as the value (`{ name: /ada/i }`): a pattern, not a value to compare with. */
const isPattern = (value: unknown) =>
  value instanceof RegExp || (value as { _bsontype?: string } | null)?._bsontype === 'BSONRegExp';

function addField(field: string, condition: unknown, into: Predicates): void {
  if (isPattern(condition)) {
    into.range.add(field);
    return;
  }
  if (!isOperatorObject(condition)) {
    into.equality.add(field);
    return;
  }
  for (const [operator, argument] of Object.entries(condition)) {
    if (operator === '$options') continue;
    if (EQUALITY_OPERATORS.has(operator) || (operator === '$exists' && !argument)) {
      into.equality.add(field);
    } else if (operator === '$elemMatch' && isPlainObject(argument) && !isOperatorObject(argument)) {
      // `{ subscriptions: { $elemMatch: { appId, status } } }` bounds the multikey index on
      // `subscriptions.appId`, `subscriptions.status` like plain predicates on those paths.
      addFilter(argument, into, `${field}.`);
    } else {
      into.range.add(field);
    }
  }
}

function addFilter(filter: Doc, into: Predicates, prefix = ''): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isPlainObject(clause)) addFilter(clause, into, prefix);
    } else if (key === '$or' && Array.isArray(condition)) {
      into.ors.push(condition.filter(isPlainObject));
    } else if (key === '$nor' && Array.isArray(condition)) {
      // Negations select everything but a few values: no tighter than a range on each field.
      for (const clause of condition.filter(isPlainObject)) {
        for (const field of Object.keys(clause)) into.range.add(`${prefix}${field}`);
      }
    } else if (IGNORED_TOP_LEVEL.has(key)) {
      continue;
    } else if (key.startsWith('$')) {
      // `$expr`, `$where`, `$text`...: kept as a pseudo field no index holds, so the gate names it.
      into.range.add(key);
    } else {
      addField(`${prefix}${key}`, condition, into);
    }
  }
}

function directionOf(value: unknown): 1 | -1 | undefined {
  if (value === 1 || value === 'asc' || value === 'ascending') return 1;
  if (value === -1 || value === 'desc' || value === 'descending') return -1;
  return undefined;
}

/** The driver sends sorts as objects (or Maps); `$natural` and `$meta` sorts use no index and are left out. */
export function sortOf(sort: unknown): [string, 1 | -1][] {
  const entries = sort instanceof Map ? [...sort.entries()] : isPlainObject(sort) ? Object.entries(sort) : [];
  const fields: [string, 1 | -1][] = [];
  for (const [field, value] of entries) {
    const direction = directionOf(value);
    if (field !== '$natural' && direction) fields.push([String(field), direction]);
  }
  return fields;
}

/**
 * The shapes of one filter and sort. An `$or` gives one shape per branch (the rest of the filter merged
 * into each), since MongoDB serves each branch by an index of its own.
 */
export function shapesOfFilter(
  collection: string,
  op: string,
  filter: unknown,
  sort: [string, 1 | -1][] = [],
): QueryShape[] {
  const base: Predicates = { equality: new Set(), range: new Set(), ors: [] };
  if (isPlainObject(filter)) addFilter(filter, base);
  const make = (predicates: Predicates): QueryShape => ({
    collection,
    op,
    equality: [...predicates.equality].sort(),
    sort,
    range: [...predicates.range].filter((field) => !predicates.equality.has(field)).sort(),
  });
  if (!base.ors.length) return [make(base)];
  return base.ors.flatMap((branches) =>
    branches.map((branch) => {
      const merged: Predicates = {
        equality: new Set(base.equality),
        range: new Set(base.range),
        ors: [],
      };
      addFilter(branch, merged);
      return make(merged);
    }),
  );
}

/** Leading `$match` and `$sort` stages (MongoDB reorders them to the front), and every `$lookup`'s join. */
function shapesOfPipeline(collection: string, pipeline: unknown[]): QueryShape[] {
  const matches: Doc[] = [];
  let sort: [string, 1 | -1][] = [];
  let leading = true;
  const lookups: QueryShape[] = [];
  for (const stage of pipeline.filter(isPlainObject)) {
    if (leading && isPlainObject(stage.$match)) matches.push(stage.$match);
    else if (leading && stage.$sort !== undefined && !sort.length) sort = sortOf(stage.$sort);
    else leading = false;
    const lookup = stage.$lookup;
    if (isPlainObject(lookup) && typeof lookup.from === 'string' && typeof lookup.foreignField === 'string') {
      lookups.push(...shapesOfFilter(lookup.from, '$lookup', { [lookup.foreignField]: 1 }));
    }
  }
  const filter = matches.length === 1 ? matches[0] : { $and: matches };
  return [...shapesOfFilter(collection, 'aggregate', filter, sort), ...lookups];
}

/**
 * The shapes a driver command asks for; none for commands that select no documents (inserts, index and
 * admin commands, `getMore`, which continues a cursor already counted).
 */
export function shapesOfCommand(commandName: string, command: Doc): QueryShape[] {
  const collection = command[commandName];
  if (typeof collection !== 'string') return [];
  switch (commandName) {
    case 'find':
      return shapesOfFilter(collection, 'find', command.filter, sortOf(command.sort));
    case 'aggregate':
      return Array.isArray(command.pipeline) ? shapesOfPipeline(collection, command.pipeline) : [];
    case 'count':
      return shapesOfFilter(collection, 'count', command.query);
    case 'distinct':
      // An index that leads with the key (after the equalities) answers `distinct` without a scan.
      return shapesOfFilter(collection, 'distinct', command.query, [[String(command.key), 1]]);
    case 'findAndModify':
      return shapesOfFilter(collection, 'findAndModify', command.query, sortOf(command.sort));
    case 'update':
      return statements(command.updates).flatMap((update) =>
        shapesOfFilter(collection, 'update', update.q, sortOf(update.sort)),
      );
    case 'delete':
      return statements(command.deletes).flatMap((remove) => shapesOfFilter(collection, 'delete', remove.q));
    default:
      return [];
  }
}

const statements = (list: unknown): Doc[] => (Array.isArray(list) ? list.filter(isPlainObject) : []);

/** One line per shape, also the key of an allow-list entry: `contacts find eq(email) sort(createdAt:-1)`. */
export function describeShape(shape: QueryShape): string {
  const parts = [
    shape.equality.length ? `eq(${shape.equality.join(',')})` : '',
    shape.sort.length
      ? `sort(${shape.sort.map(([field, direction]) => `${field}:${direction}`).join(',')})`
      : '',
    shape.range.length ? `range(${shape.range.join(',')})` : '',
  ].filter(Boolean);
  return `${shape.collection} ${shape.op} ${parts.length ? parts.join(' ') : '(no filter)'}`;
}
