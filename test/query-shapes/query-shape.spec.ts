import { describeShape, shapesOfCommand } from './query-shape';

describe('shapesOfCommand', () => {
  it('reads a find: equalities (plain, $eq, $in), ranges and the sort, without values', () => {
    const [shape] = shapesOfCommand('find', {
      find: 'tickets',
      filter: {
        appId: { $eq: 'shop' },
        status: { $in: ['open', 'pending'] },
        deletedAt: { $exists: false },
        createdAt: { $gte: new Date(0) },
        address: { city: 'Paris' },
        subject: /refund/i,
      },
      sort: { createdAt: -1, _id: -1 },
    });
    expect(shape).toEqual({
      collection: 'tickets',
      op: 'find',
      equality: ['address', 'appId', 'deletedAt', 'status'],
      sort: [
        ['createdAt', -1],
        ['_id', -1],
      ],
      range: ['createdAt'],
      // A case-insensitive pattern bounds no index; `$exists: false` also matches what a sparse index lacks.
      scan: ['subject'],
      mayBeMissing: ['deletedAt'],
    });
  });

  it('gives one shape per $or branch, the rest of the filter merged in', () => {
    const shapes = shapesOfCommand('find', {
      find: 'contacts',
      filter: { deletedAt: null, $or: [{ email: { $regex: '^a' } }, { name: { $regex: '^a' } }] },
    });
    expect(shapes.map(describeShape)).toEqual([
      'contacts find eq(deletedAt) range(email) mayBeMissing(deletedAt)',
      'contacts find eq(deletedAt) range(name) mayBeMissing(deletedAt)',
    ]);
  });

  it('reads $elemMatch as predicates on the array element paths', () => {
    const [shape] = shapesOfCommand('find', {
      find: 'contacts',
      filter: { subscriptions: { $elemMatch: { appId: 'a', status: 'subscribed' } } },
    });
    expect(shape.equality).toEqual(['subscriptions.appId', 'subscriptions.status']);
  });

  it('reads an aggregate: its leading $match and $sort stages, and $lookup joins', () => {
    const shapes = shapesOfCommand('aggregate', {
      aggregate: 'email_events',
      pipeline: [
        { $match: { campaignId: 'c' } },
        { $match: { type: { $in: ['opened'] } } },
        { $sort: { createdAt: -1 } },
        { $group: { _id: '$type', n: { $sum: 1 } } },
        { $match: { n: { $gt: 1 } } },
        { $lookup: { from: 'contacts', localField: 'contactId', foreignField: '_id', as: 'contact' } },
      ],
    });
    expect(shapes.map(describeShape)).toEqual([
      'email_events aggregate eq(campaignId,type) sort(createdAt:-1)',
      'contacts $lookup eq(_id)',
      // After $group: filtered in memory, judged on its own.
      'email_events aggregate-stage range(n)',
    ]);
  });

  it('reads a $lookup by pipeline, also inside $facet: its $match and the fields $expr joins on', () => {
    const shapes = shapesOfCommand('aggregate', {
      aggregate: 'wants',
      pipeline: [
        { $match: { appId: 'a' } },
        { $sort: { voteCount: -1, _id: -1 } },
        {
          $facet: {
            items: [
              { $limit: 21 },
              {
                $lookup: {
                  from: 'want_votes',
                  let: { wantId: '$_id' },
                  pipeline: [{ $match: { voterId: 'v', $expr: { $eq: ['$wantId', '$$wantId'] } } }],
                  as: 'votedBy',
                },
              },
            ],
            total: [{ $limit: 10_001 }, { $count: 'n' }],
          },
        },
      ],
    });
    expect(shapes.map(describeShape)).toEqual([
      'wants aggregate eq(appId) sort(voteCount:-1,_id:-1)',
      'want_votes $lookup eq(voterId,wantId)',
    ]);
  });

  it('reads update, delete and findAndModify filters with their sorts', () => {
    expect(
      shapesOfCommand('update', {
        update: 'email_jobs',
        updates: [{ q: { campaignId: 'c', heldAt: { $exists: true } }, u: {}, sort: { _id: 1 } }],
      }).map(describeShape),
    ).toEqual(['email_jobs update eq(campaignId) sort(_id:1) range(heldAt)']);
    expect(
      shapesOfCommand('delete', { delete: 'email_jobs', deletes: [{ q: {}, limit: 0 }] }).map(describeShape),
    ).toEqual(['email_jobs delete (no filter)']);
    expect(
      shapesOfCommand('findAndModify', {
        findAndModify: 'email_jobs',
        query: { status: 'pending' },
        sort: { priority: -1 },
      }).map(describeShape),
    ).toEqual(['email_jobs findAndModify eq(status) sort(priority:-1)']);
  });

  it('reads count and distinct; names $expr as a pseudo field no index holds', () => {
    expect(shapesOfCommand('count', { count: 'email_jobs' }).map(describeShape)).toEqual([
      'email_jobs count (no filter)',
    ]);
    expect(
      shapesOfCommand('distinct', { distinct: 'email_jobs', key: 'status', query: {} }).map(describeShape),
    ).toEqual(['email_jobs distinct sort(status:1)']);
    expect(
      shapesOfCommand('find', { find: 'x', filter: { $expr: { $gt: ['$a', '$b'] } } }).map(describeShape),
    ).toEqual(['x find range($expr)']);
  });

  it('ignores commands that select nothing', () => {
    expect(shapesOfCommand('insert', { insert: 'x', documents: [] })).toEqual([]);
    expect(shapesOfCommand('getMore', { getMore: 1, collection: 'x' })).toEqual([]);
    expect(shapesOfCommand('aggregate', { aggregate: 1, pipeline: [] })).toEqual([]);
  });
});
