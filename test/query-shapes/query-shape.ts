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
  /**
   * Bounded otherwise (`$gt`, `$ne`, a regular expression anchored with `^` and case-sensitive,
   * `$exists: true`, ...), sorted by name; `$expr` and the like too.
   */
  range: string[];
  /**
   * Matched by a pattern no index bounds (unanchored or case-insensitive): MongoDB scans the whole index
   * range before it for them, so no index serves them; they can only be filtered while walking one.
   */
  scan?: string[];
  /**
   * `$in` fields of a sorted shape whose value lists multiply past MAX_SORT_MERGE_POINTS: MongoDB then
   * sorts in memory instead of merging one sorted scan per value, so they count as ranges, not equalities.
   */
  wideIn?: string[];
  /**
   * Fields whose predicate also matches a document without the field (`$exists: false`, `null`, `$ne`,
   * `$nin`, `$not`): a sparse index, or a partial one that requires the field, cannot answer them.
   */
  mayBeMissing?: string[];
  /** Arrays matched with `$elemMatch`: the server reads each document to check it (never index-only). */
  elemMatch?: string[];
  /**
   * Equality values of the fields a partial index's filter names (the recorder asks for them), so the
   * gate can check that the query implies that filter.
   */
  literals?: Record<string, Literal>;
}

export type Literal = string | number | boolean | null;

/** The number of index points MongoDB merges to give a sorted result (internalQueryMaxScansToExplode). */
export const MAX_SORT_MERGE_POINTS = 200;

type Doc = Record<string, unknown>;

interface Predicates {
  equality: Set<string>;
  range: Set<string>;
  scan: Set<string>;
  /** Each `$in` field and its number of values. */
  inSizes: Map<string, number>;
  mayBeMissing: Set<string>;
  elemMatch: Set<string>;
  literals: Map<string, Literal>;
  /** Each `$or` met: one list of branches. */
  ors: Doc[][];
}

/** What the caller wants kept of the values: the fields whose equality values the shape keeps. */
export interface ShapeOptions {
  literalFields?: ReadonlySet<string>;
}

const emptyPredicates = (): Predicates => ({
  equality: new Set(),
  range: new Set(),
  scan: new Set(),
  inSizes: new Map(),
  mayBeMissing: new Set(),
  elemMatch: new Set(),
  literals: new Map(),
  ors: [],
});

const copyPredicates = (from: Predicates): Predicates => ({
  equality: new Set(from.equality),
  range: new Set(from.range),
  scan: new Set(from.scan),
  inSizes: new Map(from.inSizes),
  mayBeMissing: new Set(from.mayBeMissing),
  elemMatch: new Set(from.elemMatch),
  literals: new Map(from.literals),
  ors: [],
});

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
const isPattern = (value: unknown): value is { source: string; flags: string } =>
  value instanceof RegExp || (value as { _bsontype?: string } | null)?._bsontype === 'BSONRegExp';

/** The driver's BSONRegExp names them `pattern` and `options`. */
function patternParts(value: unknown): { source: string; flags: string } {
  const pattern = value as { source?: string; flags?: string; pattern?: string; options?: string };
  return { source: pattern.source ?? pattern.pattern ?? '', flags: pattern.flags ?? pattern.options ?? '' };
}

/**
 * Only a case-sensitive pattern anchored with `^` (and not `^.*`) gives MongoDB index bounds (a prefix
 * range); any other pattern is checked against every key of the index range it walks.
 */
function boundsIndex(source: string, flags: string): boolean {
  return !flags.includes('i') && /^(\^|\\A)/.test(source) && !/^(\^|\\A)\.\*/.test(source);
}

const isLiteral = (value: unknown): value is Literal =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

function addPattern(field: string, source: string, flags: string, into: Predicates): void {
  (boundsIndex(source, flags) ? into.range : into.scan).add(field);
}

function addField(field: string, condition: unknown, into: Predicates, options: ShapeOptions): void {
  if (isPattern(condition)) {
    const { source, flags } = patternParts(condition);
    addPattern(field, source, flags, into);
    return;
  }
  if (!isOperatorObject(condition)) {
    into.equality.add(field);
    if (condition === null || condition === undefined) into.mayBeMissing.add(field);
    if (options.literalFields?.has(field) && isLiteral(condition)) into.literals.set(field, condition);
    return;
  }
  for (const [operator, argument] of Object.entries(condition)) {
    if (operator === '$options') continue;
    if (operator === '$eq') {
      addField(field, argument, into, options);
    } else if (operator === '$in' && Array.isArray(argument)) {
      into.equality.add(field);
      into.inSizes.set(field, argument.length);
      if (argument.some((value) => value === null)) into.mayBeMissing.add(field);
    } else if (operator === '$exists' && !argument) {
      into.equality.add(field);
      into.mayBeMissing.add(field);
    } else if (operator === '$regex') {
      const source = isPattern(argument) ? patternParts(argument).source : String(argument);
      const flags = `${isPattern(argument) ? patternParts(argument).flags : ''}${typeof condition.$options === 'string' ? condition.$options : ''}`;
      addPattern(field, source, flags, into);
    } else if (operator === '$elemMatch' && isPlainObject(argument) && !isOperatorObject(argument)) {
      // `{ subscriptions: { $elemMatch: { appId, status } } }` bounds the multikey index on
      // `subscriptions.appId`, `subscriptions.status` like plain predicates on those paths; the server
      // still reads every document it selects to check that one element matches both.
      into.elemMatch.add(field);
      addFilter(argument, into, options, `${field}.`);
    } else {
      if (operator === '$elemMatch') into.elemMatch.add(field);
      if (['$ne', '$nin', '$not'].includes(operator)) into.mayBeMissing.add(field);
      into.range.add(field);
    }
  }
}

function addFilter(filter: Doc, into: Predicates, options: ShapeOptions, prefix = ''): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isPlainObject(clause)) addFilter(clause, into, options, prefix);
    } else if (key === '$or' && Array.isArray(condition)) {
      into.ors.push(condition.filter(isPlainObject));
    } else if (key === '$nor' && Array.isArray(condition)) {
      // Negations select everything but a few values: no tighter than a range on each field.
      for (const clause of condition.filter(isPlainObject)) {
        for (const field of Object.keys(clause)) {
          into.range.add(`${prefix}${field}`);
          into.mayBeMissing.add(`${prefix}${field}`);
        }
      }
    } else if (IGNORED_TOP_LEVEL.has(key)) {
      continue;
    } else if (key.startsWith('$')) {
      // `$expr`, `$where`, `$text`...: kept as a pseudo field no index holds, so the gate names it.
      into.range.add(key);
    } else {
      addField(`${prefix}${key}`, condition, into, options);
    }
  }
}

function directionOf(value: unknown): 1 | -1 | undefined {
  if (value === 1 || value === 'asc' || value === 'ascending') return 1;
  if (value === -1 || value === 'desc' || value === 'descending') return -1;
  return undefined;
}

/**
 * The driver sends sorts as objects (or Maps); `$natural` and `$meta` sorts use no index and are left out.
 */
export function sortOf(sort: unknown): [string, 1 | -1][] {
  const entries = sort instanceof Map ? [...sort.entries()] : isPlainObject(sort) ? Object.entries(sort) : [];
  const fields: [string, 1 | -1][] = [];
  for (const [field, value] of entries) {
    const direction = directionOf(value);
    if (field !== '$natural' && direction) fields.push([String(field), direction]);
  }
  return fields;
}

/** The shape of one set of predicates; the optional parts only when they say something. */
function shapeOf(
  collection: string,
  op: string,
  predicates: Predicates,
  sort: [string, 1 | -1][],
): QueryShape {
  let points = 1;
  for (const size of predicates.inSizes.values()) points *= Math.max(size, 1);
  const wide = sort.length > 0 && points > MAX_SORT_MERGE_POINTS ? [...predicates.inSizes.keys()].sort() : [];
  const equality = [...predicates.equality].filter((field) => !wide.includes(field)).sort();
  const shape: QueryShape = {
    collection,
    op,
    equality,
    sort,
    range: [...predicates.range].filter((field) => !predicates.equality.has(field)).sort(),
  };
  const optional = {
    scan: [...predicates.scan].filter((field) => !predicates.equality.has(field)).sort(),
    wideIn: wide,
    mayBeMissing: [...predicates.mayBeMissing].sort(),
    elemMatch: [...predicates.elemMatch].sort(),
  };
  for (const [name, fields] of Object.entries(optional)) {
    if (fields.length) shape[name as keyof typeof optional] = fields;
  }
  if (predicates.literals.size) {
    shape.literals = Object.fromEntries([...predicates.literals].sort(([a], [b]) => a.localeCompare(b)));
  }
  return shape;
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
  options: ShapeOptions = {},
): QueryShape[] {
  const base = emptyPredicates();
  if (isPlainObject(filter)) addFilter(filter, base, options);
  if (!base.ors.length) return [shapeOf(collection, op, base, sort)];
  return base.ors.flatMap((branches) =>
    branches.map((branch) => {
      const merged = copyPredicates(base);
      addFilter(branch, merged, options);
      return shapeOf(collection, op, merged, sort);
    }),
  );
}

/** `countDocuments` sends `[$match, ($skip), ($limit), $group {_id: 1, n: {$sum: 1}}]`. */
function isCountPipeline(stages: Doc[]): boolean {
  const last = stages[stages.length - 1];
  const group = last?.$group;
  return (
    isPlainObject(group) &&
    group._id === 1 &&
    Object.keys(group).length === 2 &&
    stages.slice(0, -1).every((stage) => ['$match', '$skip', '$limit'].includes(Object.keys(stage)[0]))
  );
}

/**
 * The stages after the leading ones that filter or sort what came before (also inside `$facet`): no
 * index serves them, so each gives an `aggregate-stage` shape the gate judges on its own.
 */
function laterStageShapes(collection: string, stages: Doc[]): QueryShape[] {
  const shapes: QueryShape[] = [];
  for (const stage of stages) {
    if (isPlainObject(stage.$match)) {
      shapes.push(...shapesOfFilter(collection, 'aggregate-stage', stage.$match));
    } else if (stage.$sort !== undefined) {
      shapes.push(...shapesOfFilter(collection, 'aggregate-stage', {}, sortOf(stage.$sort)));
    } else if (isPlainObject(stage.$facet)) {
      for (const branch of Object.values(stage.$facet)) {
        if (Array.isArray(branch)) shapes.push(...laterStageShapes(collection, branch.filter(isPlainObject)));
      }
    }
  }
  return shapes;
}

/**
 * Leading `$match` and `$sort` stages (MongoDB reorders them to the front), every `$lookup`'s join, and
 * the later stages that filter or sort in memory. A `countDocuments` pipeline is a count.
 */
function shapesOfPipeline(collection: string, pipeline: unknown[], options: ShapeOptions): QueryShape[] {
  const stages = pipeline.filter(isPlainObject);
  const op = isCountPipeline(stages) ? 'countDocuments' : 'aggregate';
  const matches: Doc[] = [];
  let sort: [string, 1 | -1][] = [];
  let leading = 0;
  for (const stage of stages) {
    if (isPlainObject(stage.$match)) matches.push(stage.$match);
    else if (stage.$sort !== undefined && !sort.length) sort = sortOf(stage.$sort);
    else break;
    leading++;
  }
  const filter = matches.length === 1 ? matches[0] : { $and: matches };
  return [
    ...shapesOfFilter(collection, op, filter, sort, options),
    ...lookupShapes(stages),
    ...laterStageShapes(collection, stages.slice(leading)),
  ];
}

/**
 * Every `$lookup`'s join (also inside `$facet`): `foreignField`, or the leading `$match` of its pipeline,
 * where `$expr: {$eq: ['$field', '$$variable']}` (alone or in an `$and`) is an equality on the field.
 */
function lookupShapes(stages: Doc[]): QueryShape[] {
  const shapes: QueryShape[] = [];
  for (const stage of stages) {
    const lookup = stage.$lookup;
    if (isPlainObject(stage.$facet)) {
      for (const branch of Object.values(stage.$facet)) {
        if (Array.isArray(branch)) shapes.push(...lookupShapes(branch.filter(isPlainObject)));
      }
    }
    if (!isPlainObject(lookup) || typeof lookup.from !== 'string') continue;
    if (typeof lookup.foreignField === 'string') {
      shapes.push(...shapesOfFilter(lookup.from, '$lookup', { [lookup.foreignField]: 1 }));
    } else if (Array.isArray(lookup.pipeline)) {
      const first = lookup.pipeline.find(isPlainObject);
      const { $expr, ...match } = isPlainObject(first?.$match) ? first.$match : {};
      for (const field of joinedFields($expr)) match[field] = 1;
      shapes.push(...shapesOfFilter(lookup.from, '$lookup', match));
    }
  }
  return shapes;
}

/** The fields an `$expr` compares for equality with a `$$variable` of the lookup. */
function joinedFields(expr: unknown): string[] {
  if (!isPlainObject(expr)) return [];
  if (Array.isArray(expr.$and)) return expr.$and.flatMap(joinedFields);
  const eq = expr.$eq;
  if (!Array.isArray(eq) || eq.length !== 2) return [];
  const [field] = eq.filter((side) => typeof side === 'string' && /^\$[^$]/.test(side)) as string[];
  return field && eq.some((side) => typeof side === 'string' && side.startsWith('$$'))
    ? [field.slice(1)]
    : [];
}

/**
 * The shapes a driver command asks for; none for commands that select no documents (inserts, index and
 * admin commands, `getMore`, which continues a cursor already counted).
 */
export function shapesOfCommand(
  commandName: string,
  command: Doc,
  literalFields: (collection: string) => ReadonlySet<string> | undefined = () => undefined,
): QueryShape[] {
  const collection = command[commandName];
  if (typeof collection !== 'string') return [];
  const options: ShapeOptions = { literalFields: literalFields(collection) };
  switch (commandName) {
    case 'find':
      return shapesOfFilter(collection, 'find', command.filter, sortOf(command.sort), options);
    case 'aggregate':
      return Array.isArray(command.pipeline) ? shapesOfPipeline(collection, command.pipeline, options) : [];
    case 'count':
      return shapesOfFilter(collection, 'count', command.query, [], options);
    case 'distinct':
      // An index that leads with the key (after the equalities) answers `distinct` without a scan.
      return shapesOfFilter(collection, 'distinct', command.query, [[String(command.key), 1]], options);
    case 'findAndModify':
      return shapesOfFilter(collection, 'findAndModify', command.query, sortOf(command.sort), options);
    case 'update':
      return statements(command.updates).flatMap((update) =>
        shapesOfFilter(collection, 'update', update.q, sortOf(update.sort), options),
      );
    case 'delete':
      return statements(command.deletes).flatMap((remove) =>
        shapesOfFilter(collection, 'delete', remove.q, [], options),
      );
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
    ...optionalParts(shape),
  ].filter(Boolean);
  return `${shape.collection} ${shape.op} ${parts.length ? parts.join(' ') : '(no filter)'}`;
}

function optionalParts(shape: QueryShape): string[] {
  const list = (name: string, fields: string[] | undefined) =>
    fields?.length ? `${name}(${fields.join(',')})` : '';
  const literals = Object.entries(shape.literals ?? {});
  return [
    list('scan', shape.scan),
    list('wideIn', shape.wideIn),
    list('mayBeMissing', shape.mayBeMissing),
    list('elemMatch', shape.elemMatch),
    literals.length
      ? `where(${literals.map(([field, value]) => `${field}=${JSON.stringify(value)}`).join(',')})`
      : '',
  ];
}
