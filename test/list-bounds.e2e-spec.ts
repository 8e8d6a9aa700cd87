import { getModelToken } from '@nestjs/mongoose';
import { type Model, Types } from 'mongoose';
import { cursorAfter } from '../src/common/pagination/page-cursor';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp, subscriberDocument } from './helpers/factories';
import type { TestResponse } from './helpers/http';
import { createSession, Session } from './helpers/session';
import { seedTickets } from './helpers/tickets';

/** Seeding ten thousand records on a shared, busy machine: a hook's deadline, not a speed claim. */
const SEEDING_MS = 600_000;
// Pages over ten thousand records scan them on the dev database: deadlines for a loaded machine.
jest.setTimeout(300_000);

/** One past the count cap and the skip cap (10,000), plus a few: the last page is past both. */
const LARGE = 10_005;
const SMALL = 45;

const idsOf = (res: TestResponse) => (res.body.data as { _id: string }[]).map((item) => item._id);

/** Reads a list page after page by `pagination.next`; fails on a page that is not a 200. */
async function walk(read: (after?: string) => Promise<TestResponse>): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  do {
    const res = await read(after);
    expect(res.status).toBe(200);
    pages.push(idsOf(res));
    after = res.body.pagination.next ?? undefined;
  } while (after && pages.length < 100);
  return pages;
}

describe('Lists read a bounded number of records (docs/api/README.md "Paging")', () => {
  let t: TestApp;
  let admin: Session;
  let large: string;
  let small: string;
  let smallIds: string[];

  beforeAll(async () => {
    t = await createTestApp();
    admin = await createSession(t);
    large = (await seedApp(t)).id;
    small = (await seedApp(t)).id;
    const contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    for (let from = 0; from < LARGE; from += 2_500) {
      const batch = [];
      for (let i = from; i < Math.min(LARGE, from + 2_500); i += 1) {
        batch.push(subscriberDocument(large, `large-${i}@example.com`));
      }
      await contacts.collection.insertMany(batch);
    }
    // Three creation times for 45 people: the walk must break ties on `_id`, not skip or repeat them.
    const times = [0, 1, 2].map((i) => new Date(Date.UTC(2026, 0, 1 + i)));
    const few = Array.from({ length: SMALL }, (_, i) =>
      subscriberDocument(small, `small-${i}@example.com`, null, times[i % 3]),
    );
    await contacts.collection.insertMany(few);
    smallIds = few.map((doc) => String(doc._id));
  }, SEEDING_MS);
  afterAll(() => t.close());

  const subscribers = (appId: string, query: Record<string, string | number> = {}) =>
    admin.http.get(`/admin/${appId}/newsletter/subscribers`, { query });

  it('refuses a page that would skip more than 10,000 records, naming page and how to continue', async () => {
    const deepest = await subscribers(large, { limit: 100, page: 101 });
    expect(deepest.status).toBe(200);
    expect(deepest.body.data).toHaveLength(LARGE - 10_000);
    const deeper = await subscribers(large, { limit: 100, page: 102 });
    expect(deeper.status).toBe(400);
    expect(deeper.body).toEqual({
      success: false,
      error: expect.stringMatching(/^page must be at most 101/),
    });
    expect(deeper.body.error).toContain('after=<pagination.next');
    const byTwenty = await subscribers(large, { limit: 20, page: 502 });
    expect(byTwenty.status).toBe(400);
    expect(byTwenty.body.error).toMatch(/^page must be at most 501 with limit 20/);
  });

  it('stops counting at 10,000 matches and says so; a smaller total is exact', async () => {
    const res = await subscribers(large);
    expect(res.body.pagination).toEqual({
      page: 1,
      limit: 20,
      total: 10_000,
      pages: 500,
      totalCapped: true,
      next: expect.any(String),
    });
    const exact = await subscribers(small, { limit: 50 });
    expect(exact.body.pagination).toEqual({
      page: 1,
      limit: 50,
      total: SMALL,
      pages: 1,
      totalCapped: false,
      next: null,
    });
  });

  it('walks a whole list by cursor without duplicates or gaps, across ties of the sort key', async () => {
    const pages = await walk((after) => subscribers(small, { limit: 7, ...(after ? { after } : {}) }));
    expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 7, 7, 3]);
    const walked = pages.flat();
    expect(new Set(walked).size).toBe(SMALL);
    expect([...walked].sort()).toEqual([...smallIds].sort());
    // Newest first, ties newest `_id` first: the same order as one page of everything.
    expect(walked).toEqual(idsOf(await subscribers(small, { limit: 50 })));
  });

  it('continues past the deepest page by cursor, counting from there', async () => {
    const last = await subscribers(large, { limit: 100, page: 100 });
    expect(last.status).toBe(200);
    const rest = await subscribers(large, { limit: 100, after: last.body.pagination.next });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(LARGE - 10_000);
    expect(rest.body.pagination).toMatchObject({
      page: 1,
      total: LARGE - 10_000,
      totalCapped: false,
      next: null,
    });
    const seen = new Set([...idsOf(last), ...idsOf(rest)]);
    expect(seen.size).toBe(100 + LARGE - 10_000);
  });

  it.each([
    ['a forged cursor', Buffer.from('{"k":["createdAt","_id"],"v":[{"$gt":1},2]}').toString('base64url')],
    [
      'a cursor of another list order',
      cursorAfter({ subject: 'x', _id: new Types.ObjectId() }, { subject: 1, _id: 1 }),
    ],
    ['no cursor at all', 'bm90LWEtY3Vyc29y'],
  ])('answers 400 naming after for %s', async (_, after) => {
    const res = await subscribers(small, { after });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^after must be the pagination\.next value/);
  });

  describe('tickets across apps (GET /tickets)', () => {
    beforeAll(async () => {
      const statuses = ['pending', 'in_progress', 'resolved'] as const;
      const priorities = ['low', 'normal', 'urgent'] as const;
      await seedTickets(
        t,
        Array.from({ length: 20 }, (_, i) => ({
          appId: i % 2 ? large : small,
          status: statuses[i % 3],
          priority: priorities[i % 3],
          topic: i % 4 ? ('general' as const) : ('billing' as const),
          subject: `Subject ${i % 5}`,
          email: i % 5 ? `customer${i}@example.com` : 'vip@example.com',
        })),
      );
    });

    it.each([
      ['status', { status: 'pending' }, 7],
      ['topic', { topic: 'billing' }, 5],
      ['priority', { priority: 'urgent' }, 6],
      ['email', { email: 'vip@example.com' }, 4],
    ])('filters by %s across apps, newest first', async (_, query, count) => {
      const res = await admin.http.get('/tickets', { query: { ...query, limit: 100 } });
      expect(res.status).toBe(200);
      expect(res.body.pagination.total).toBe(count);
    });

    it.each(['priority', 'status', 'subject', 'updatedAt'])(
      'walks every ticket sorted by %s by cursor, each once',
      async (sortBy) => {
        for (const sortOrder of ['asc', 'desc']) {
          const pages = await walk((after) =>
            admin.http.get('/tickets', {
              query: { sortBy, sortOrder, limit: 3, ...(after ? { after } : {}) },
            }),
          );
          const walked = pages.flat();
          expect(walked).toHaveLength(20);
          expect(new Set(walked).size).toBe(20);
        }
      },
    );

    it('refuses a sort across apps combined with a filter, and a shop without its app (400 naming it)', async () => {
      const sorted = await admin.http.get('/tickets', { query: { sortBy: 'priority', status: 'pending' } });
      expect(sorted.status).toBe(400);
      expect(sorted.body.error).toMatch(/^sortBy priority across apps takes no filter \(status given\)/);
      const shop = await admin.http.get('/tickets', { query: { shopId: 'shop-1' } });
      expect(shop.status).toBe(400);
      expect(shop.body.error).toMatch(/^shopId needs appId/);
      const oneApp = await admin.http.get('/tickets', {
        query: { appId: small, sortBy: 'priority', status: 'pending' },
      });
      expect(oneApp.status).toBe(200);
    });
  });

  describe('filters served by indexes of their own', () => {
    it('lists subscribers by status and contacts by consent category', async () => {
      const active = await subscribers(small, { status: 'active', limit: 5 });
      expect(active.body.pagination).toMatchObject({ total: SMALL, totalCapped: false });
      const consent = await admin.http.get('/admin/contacts', { query: { category: 'blog', limit: 5 } });
      expect(consent.body.pagination).toMatchObject({ total: 10_000, totalCapped: true });
      const refused = await admin.http.get('/admin/contacts', {
        query: { category: 'blog', categoryStatus: 'false' },
      });
      expect(refused.body.pagination).toMatchObject({ total: 0, totalCapped: false });
    });

    it('lists e-mail events by type within a campaign or an app, and refuses provider there', async () => {
      const queries: Record<string, string>[] = [
        { campaignId: 'c-1', type: 'bounced' },
        { appId: small, type: 'complained' },
      ];
      for (const query of queries) {
        const res = await admin.http.get('/admin/email-events', { query });
        expect(res.status).toBe(200);
      }
      const res = await admin.http.get('/admin/email-events', {
        query: { appId: small, provider: 'primary' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^provider cannot be combined with appId/);
      const alone = await admin.http.get('/admin/email-events', { query: { provider: 'primary' } });
      expect(alone.status).toBe(200);
    });
  });

  describe('job counts of the health record and the queue statistics', () => {
    beforeAll(async () => {
      const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
      const now = new Date();
      for (let from = 0; from < LARGE; from += 2_500) {
        const batch = [];
        for (let i = from; i < Math.min(LARGE, from + 2_500); i += 1) {
          batch.push({
            type: 'email.send',
            status: 'completed',
            priority: 0,
            payload: {},
            attempts: 1,
            maxAttempts: 5,
            idempotencyKey: `bench-${i}`,
            campaignId: 'c-large',
            scheduledAt: now,
            createdAt: now,
            updatedAt: now,
          });
        }
        await jobs.collection.insertMany(batch);
      }
    }, SEEDING_MS);

    it('stops each status count at 10,000 and says so', async () => {
      const queries: Record<string, string>[] = [{}, { campaignId: 'c-large' }];
      for (const query of queries) {
        const stats = await admin.http.get('/admin/email-jobs/stats', { query });
        expect(stats.status).toBe(200);
        expect(stats.body.data).toMatchObject({ completed: 10_000, pending: 0, total: 10_000, capped: true });
      }
      const health = await t.http.get('/health');
      expect(health.body.emailWorker.queue).toMatchObject({ completed: 10_000, pending: 0, capped: true });
    });

    it('lists jobs by status alone', async () => {
      const res = await admin.http.get('/admin/email-jobs', { query: { status: 'completed', limit: 1 } });
      expect(res.body.pagination).toMatchObject({ total: 10_000, totalCapped: true });
    });
  });
});
