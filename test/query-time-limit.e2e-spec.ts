import { ContactsAdminService } from '../src/contacts/contacts-admin.service';
import { REQUEST_QUERY_MAX_TIME_MS } from '../src/common/database/request-time-limit';
import { createTestApp, TestApp } from './helpers/app';
import { MongoFaultProxy, type SeenCommand } from './helpers/mongo-fault-proxy';
import { createSession, Session } from './helpers/session';

/** What MongoDB answers when a query runs past its `maxTimeMS`. */
const TIME_LIMIT_EXCEEDED = {
  ok: 0,
  errmsg: 'operation exceeded time limit',
  code: 50,
  codeName: 'MaxTimeMSExpired',
};

/**
 * The dev database ignores `maxTimeMS` (it never stops a query), so a proxy between the service and it
 * plays MongoDB's part: while `stalled`, a contacts query that carries a time limit is answered with the
 * error MongoDB sends when that limit passes. docs/operations/running-on-mongodb.md "Time limits".
 */
describe('Queries sent for a request carry a time limit; reaching it answers 503', () => {
  let proxy: MongoFaultProxy;
  let t: TestApp;
  let admin: Session;
  let stalled = false;

  const limited = (command: SeenCommand) => command.body.maxTimeMS !== undefined;
  const contactQueries = (commands: SeenCommand[]) =>
    commands.filter(
      (command) => command.collection === 'contacts' && /^(find|aggregate)$/.test(command.name),
    );

  beforeAll(async () => {
    proxy = await MongoFaultProxy.start(process.env.MONGODB_URI!, {
      onCommand: (command) =>
        stalled && command.name === 'find' && command.collection === 'contacts' && limited(command)
          ? { kind: 'answer', reply: TIME_LIMIT_EXCEEDED }
          : undefined,
    });
    process.env.MONGODB_URI = proxy.uriFor(process.env.MONGODB_URI!);
    t = await createTestApp();
    admin = await createSession(t);
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  it('sends maxTimeMS with the guard’s lookup, the page and its count', async () => {
    const from = proxy.commands.length;
    const res = await admin.http.get('/admin/contacts', { query: { tag: 'vip' } });
    expect(res.status).toBe(200);
    const sent = proxy.commands.slice(from);
    const users = sent.filter((command) => command.name === 'find' && command.collection === 'users');
    const queries = [...users, ...contactQueries(sent)];
    expect(queries.map((command) => command.name).sort()).toEqual(['aggregate', 'find', 'find']);
    for (const command of queries) expect(command.body.maxTimeMS).toBe(REQUEST_QUERY_MAX_TIME_MS);
  });

  it('leaves work outside a request (workers, the planner, start-up) without one', async () => {
    const from = proxy.commands.length;
    await t.app.get(ContactsAdminService).list({ page: 1, limit: 5, tag: 'vip' });
    const queries = contactQueries(proxy.commands.slice(from));
    expect(queries).toHaveLength(2);
    expect(queries.filter(limited)).toEqual([]);
  });

  it('answers 503 with the envelope and Retry-After when the server stops the query', async () => {
    stalled = true;
    try {
      const res = await admin.http.get('/admin/contacts');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        success: false,
        error: 'The database took too long to answer; try again later',
      });
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      stalled = false;
    }
    expect((await admin.http.get('/admin/contacts')).status).toBe(200);
  });
});
