import { analyseCoverage, type CoverageIndex, formatReport, serves } from './index-coverage';
import { describeShape, type QueryShape, shapesOfCommand } from './query-shape';

const index = (key: [string, number][], options: Partial<CoverageIndex> = {}): CoverageIndex => ({
  collection: 'tickets',
  key,
  unique: false,
  sparse: false,
  ttl: false,
  ...options,
});

const shape = (parts: Partial<QueryShape>): QueryShape => ({
  collection: 'tickets',
  op: 'find',
  equality: [],
  sort: [],
  range: [],
  ...parts,
});

describe('serves (equality, sort, range)', () => {
  const byAppStatusCreated = index([
    ['appId', 1],
    ['status', 1],
    ['createdAt', -1],
    ['_id', -1],
  ]);

  it('serves equality fields in any order, then the sort', () => {
    const page = shape({
      equality: ['status', 'appId'],
      sort: [
        ['createdAt', -1],
        ['_id', -1],
      ],
    });
    expect(serves(byAppStatusCreated, page)).toBe(true);
  });

  it('serves the sort reversed as a whole', () => {
    const oldestFirst = shape({
      equality: ['appId', 'status'],
      sort: [
        ['createdAt', 1],
        ['_id', 1],
      ],
    });
    expect(serves(byAppStatusCreated, oldestFirst)).toBe(true);
  });

  it('does not serve a sort reversed in part only', () => {
    const mixed = shape({
      equality: ['appId', 'status'],
      sort: [
        ['createdAt', 1],
        ['_id', -1],
      ],
    });
    expect(serves(byAppStatusCreated, mixed)).toBe(false);
  });

  it('does not serve a sort on a field the index does not end its equalities with', () => {
    const byApp = index([
      ['appId', 1],
      ['createdAt', -1],
    ]);
    expect(
      serves(
        byApp,
        shape({
          equality: ['appId'],
          sort: [
            ['createdAt', -1],
            ['_id', -1],
          ],
        }),
      ),
    ).toBe(false);
    expect(serves(byApp, shape({ equality: ['appId'], sort: [['createdAt', -1]] }))).toBe(true);
  });

  it('does not serve equality fields the index lacks', () => {
    expect(serves(byAppStatusCreated, shape({ equality: ['appId', 'email'] }))).toBe(false);
  });

  it('serves a prefix of the index', () => {
    expect(serves(byAppStatusCreated, shape({ equality: ['appId'] }))).toBe(true);
  });

  it('serves a range after the equalities and the sort', () => {
    const queue = index([
      ['status', 1],
      ['priority', -1],
      ['scheduledAt', 1],
    ]);
    const due = shape({ equality: ['status'], sort: [['priority', -1]], range: ['scheduledAt'] });
    expect(serves(queue, due)).toBe(true);
  });

  it('does not serve a range placed before the sort', () => {
    const rangeFirst = index([
      ['status', 1],
      ['scheduledAt', 1],
      ['priority', -1],
    ]);
    const due = shape({ equality: ['status'], sort: [['priority', -1]], range: ['scheduledAt'] });
    expect(serves(rangeFirst, due)).toBe(false);
  });

  it('serves a range on the sort field by the sort position', () => {
    const since = shape({ equality: ['appId', 'status'], sort: [['createdAt', -1]], range: ['createdAt'] });
    expect(serves(byAppStatusCreated, since)).toBe(true);
  });

  it('drops a sort on a field the filter pins', () => {
    const pinned = shape({ equality: ['appId'], sort: [['appId', 1]] });
    expect(serves(index([['appId', 1]]), pinned)).toBe(true);
  });

  it('serves any filter that pins every field of a unique index', () => {
    const unique = index([['email', 1]], { unique: true });
    expect(serves(unique, shape({ equality: ['email', 'status'], range: ['deletedAt'] }))).toBe(true);
    expect(serves(index([['email', 1]]), shape({ equality: ['email', 'status'] }))).toBe(false);
  });

  it('does not serve a shape of another collection', () => {
    expect(serves(byAppStatusCreated, shape({ collection: 'wants', equality: ['appId'] }))).toBe(false);
  });

  it('does not use a sparse index for a shape that does not filter on its first field', () => {
    const sparse = index([['messageId', 1]], { sparse: true });
    expect(serves(sparse, shape({ sort: [['messageId', 1]] }))).toBe(false);
    expect(serves(sparse, shape({ equality: ['messageId'] }))).toBe(true);
  });

  it('never uses a sparse index for $exists: false or null (they match documents it does not hold)', () => {
    const sparse = index([['claimKey', 1]], { sparse: true, unique: true });
    const absent = shapesOfCommand('find', { find: 'tickets', filter: { claimKey: { $exists: false } } });
    const isNull = shapesOfCommand('find', { find: 'tickets', filter: { claimKey: null } });
    expect(serves(sparse, absent[0])).toBe(false);
    expect(serves(sparse, isNull[0])).toBe(false);
    expect(serves(index([['claimKey', 1]]), absent[0])).toBe(true);
  });

  it('uses a partial index only when the filter implies its expression, whatever field leads', () => {
    const held = index(
      [
        ['campaignId', 1],
        ['heldAt', 1],
      ],
      { partialFilter: { heldAt: { $exists: true } } },
    );
    const plans = index([['payload.recipients.to', 1]], { partialFilter: { type: 'email.batch.plan' } });
    const find = (filter: Record<string, unknown>) =>
      shapesOfCommand('find', { find: 'tickets', filter }, () => new Set(['type']))[0];
    // The leading field is filtered, yet documents without heldAt are not in the index.
    expect(serves(held, find({ campaignId: 'c' }))).toBe(false);
    expect(serves(held, find({ campaignId: 'c', heldAt: { $exists: true } }))).toBe(true);
    expect(serves(held, find({ campaignId: 'c', heldAt: { $lte: new Date() } }))).toBe(true);
    expect(serves(plans, find({ type: 'email.batch.plan', 'payload.recipients.to': 'a@b.c' }))).toBe(true);
    expect(serves(plans, find({ type: 'email.send', 'payload.recipients.to': 'a@b.c' }))).toBe(false);
    expect(serves(plans, find({ 'payload.recipients.to': 'a@b.c' }))).toBe(false);
  });

  it('treats $in with a sort as equality up to 200 points only (beyond, MongoDB sorts in memory)', () => {
    const byAppCreated = index([
      ['appId', 1],
      ['createdAt', -1],
    ]);
    const page = (values: number) =>
      shapesOfCommand('find', {
        find: 'tickets',
        filter: { appId: { $in: Array.from({ length: values }, (_, i) => `a${i}`) } },
        sort: { createdAt: -1 },
      })[0];
    expect(serves(byAppCreated, page(200))).toBe(true);
    expect(page(201).wideIn).toEqual(['appId']);
    expect(serves(byAppCreated, page(201))).toBe(false);
    // Walking the sort and checking the values on the way is still served.
    expect(
      serves(
        index([
          ['createdAt', -1],
          ['appId', 1],
        ]),
        page(201),
      ),
    ).toBe(true);
  });

  it('never serves an unanchored or case-insensitive pattern; an anchored one is a range', () => {
    const byAppSubject = index([
      ['appId', 1],
      ['subject', 1],
    ]);
    const find = (subject: unknown) =>
      shapesOfCommand('find', { find: 'tickets', filter: { appId: 'a', subject } })[0];
    expect(serves(byAppSubject, find(/^refund/))).toBe(true);
    expect(serves(byAppSubject, find(/refund/))).toBe(false);
    expect(serves(byAppSubject, find(/^refund/i))).toBe(false);
    expect(serves(byAppSubject, find({ $regex: '^refund', $options: 'i' }))).toBe(false);
    expect(describeShape(find(/refund/i))).toBe('tickets find eq(appId) scan(subject)');
  });

  it('never serves a shape with no predicate and no sort', () => {
    expect(serves(byAppStatusCreated, shape({}))).toBe(false);
  });
});

describe('analyseCoverage', () => {
  const indexes = [
    index([
      ['appId', 1],
      ['createdAt', -1],
      ['_id', -1],
    ]),
    index([['expiresAt', 1]], { ttl: true }),
    index([['shopId', 1]]),
  ];
  const byId = shape({ equality: ['_id', 'appId'] });
  const page = shape({
    equality: ['appId'],
    sort: [
      ['createdAt', -1],
      ['_id', -1],
    ],
  });
  const scan = shape({ op: 'aggregate' });
  const allowed = shape({ equality: ['email'] });
  const estimated = shape({ op: 'count' });
  const search = shape({
    equality: ['appId'],
    sort: [
      ['createdAt', -1],
      ['_id', -1],
    ],
    range: ['subject'],
  });
  const flagged = shape({ collection: 'apps', equality: ['active'] });

  const report = analyseCoverage([byId, page, scan, allowed, estimated, search, flagged], indexes, [
    { shape: describeShape(allowed), reason: 'admin-only, bounded by a limit' },
    { shape: 'tickets find eq(nothing)', reason: 'stale' },
    { collection: 'tickets', filteredFields: ['sub*'], reason: 'free-text search' },
    { collection: 'apps', wholeCollection: true, reason: 'a few hundred apps' },
  ]);
  const verdictOf = (wanted: QueryShape) =>
    report.shapes.find(({ shape: judged }) => judged === wanted)?.verdict.kind;

  it('judges each shape', () => {
    expect(verdictOf(byId)).toBe('id');
    expect(verdictOf(page)).toBe('index');
    expect(verdictOf(scan)).toBe('uncovered');
    expect(verdictOf(allowed)).toBe('allowed');
    expect(verdictOf(estimated)).toBe('metadata');
    expect(verdictOf(search)).toBe('allowed');
    expect(verdictOf(flagged)).toBe('allowed');
  });

  it('lets an alternative sort be done in memory only where an index serves the filter', () => {
    const entry = { collection: 'tickets', sortedInMemory: ['subject'], reason: 'one app, admin only' };
    const byApp = shape({
      equality: ['appId'],
      sort: [
        ['subject', 1],
        ['_id', 1],
      ],
    });
    const byShop = shape({
      equality: ['shopId', 'email'],
      sort: [
        ['subject', 1],
        ['_id', 1],
      ],
    });
    const judged = analyseCoverage([byApp, byShop], indexes, [entry]);
    expect(judged.shapes.map(({ verdict }) => verdict.kind)).toEqual(['allowed', 'uncovered']);
  });

  it('lets fields be filtered outside the index only where an index serves the rest', () => {
    const unsorted = shape({ equality: ['status'], range: ['subject'] });
    const judged = analyseCoverage([unsorted], indexes, [
      { collection: 'tickets', filteredFields: ['subject'], reason: 'free-text search' },
    ]);
    expect(judged.shapes[0].verdict.kind).toBe('uncovered');
  });

  it('names the indexes that serve no shape and the allow-list entries that match none', () => {
    expect(report.unused.map(({ key }) => key[0][0])).toEqual(['expiresAt', 'shopId']);
    expect(report.unmatchedAllowances.map(({ reason }) => reason)).toEqual(['stale']);
  });

  it('judges counts on their own: no collection entry excuses them, and $elemMatch is never index-only', () => {
    const contacts = index(
      [
        ['subscriptions.appId', 1],
        ['subscriptions.status', 1],
      ],
      {
        collection: 'contacts',
      },
    );
    const [count] = shapesOfCommand('aggregate', {
      aggregate: 'contacts',
      pipeline: [
        { $match: { subscriptions: { $elemMatch: { appId: 'a', status: 'active' } } } },
        { $group: { _id: 1, n: { $sum: 1 } } },
      ],
    });
    const [page] = shapesOfCommand('find', {
      find: 'contacts',
      filter: { subscriptions: { $elemMatch: { appId: 'a', status: 'active' } } },
    });
    expect(count.op).toBe('countDocuments');
    const whole = { collection: 'contacts', wholeCollection: true as const, reason: 'small' };
    const judged = analyseCoverage([count, page], [contacts], [whole]);
    const kinds = Object.fromEntries(judged.shapes.map(({ shape, verdict }) => [shape.op, verdict.kind]));
    expect(kinds).toEqual({ countDocuments: 'uncovered', find: 'index' });
    const byShape = { shape: describeShape(count), reason: 'capped count' };
    expect(analyseCoverage([count], [contacts], [byShape]).shapes[0].verdict.kind).toBe('allowed');
  });

  it('judges the stages after the first $match and $sort: in memory, allowed one shape at a time', () => {
    const shapes = shapesOfCommand('aggregate', {
      aggregate: 'tickets',
      pipeline: [
        { $match: { appId: 'a' } },
        { $facet: { recent: [{ $sort: { createdAt: -1 } }, { $limit: 5 }] } },
      ],
    });
    expect(shapes.map(describeShape)).toEqual([
      'tickets aggregate eq(appId)',
      'tickets aggregate-stage sort(createdAt:-1)',
    ]);
    const judged = analyseCoverage(
      shapes,
      [
        index([
          ['appId', 1],
          ['createdAt', -1],
        ]),
      ],
      [],
    );
    expect(judged.shapes.map(({ verdict }) => verdict.kind)).toEqual(['index', 'uncovered']);
  });

  it('prints the figures, the uncovered shapes and the allow-list reasons', () => {
    const text = formatReport(report).join('\n');
    expect(text).toContain('Query shapes recorded: 7');
    expect(text).toContain('index-served in all: 3');
    expect(text).toContain('allow-listed: 3');
    expect(text).toContain('uncovered: 1');
    expect(text).toContain('tickets aggregate (no filter)');
    expect(text).toContain('admin-only, bounded by a limit');
    expect(text).toContain('tickets { expiresAt: 1 } (TTL: the server expires documents with it)');
  });
});
