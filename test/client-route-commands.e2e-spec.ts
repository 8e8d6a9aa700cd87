import { Types } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { commandsDuring, monitorDatabaseCommands } from './helpers/db-commands';
import { seedApiKey, seedApp } from './helpers/factories';
import type { HttpClient } from './helpers/http';
import { createSession, Session } from './helpers/session';

type Answer = { status: number; body: Record<string, unknown> };

/**
 * The database commands of the routes a client app's backend calls, with its credential cached
 * (docs/decisions/data-vote-without-a-read.md, docs/decisions/data-one-command-client-reads.md): a change
 * that adds a round trip to one of them fails here, however fast the machine.
 */
describe('Database commands of the client-app routes', () => {
  let t: TestApp;
  let app: App;
  let client = 0;
  const nextIp = () => `10.43.${(client += 1) >> 8}.${client & 255}`;

  beforeAll(async () => {
    monitorDatabaseCommands();
    t = await createTestApp();
  });
  afterAll(() => t.close());
  // A fresh app per test, the database kept: emptying it would reset the credential stamps, and the next
  // stamp read would then drop the cached credentials in the middle of a test (CredentialChanges).
  beforeEach(async () => {
    app = await seedApp(t, { name: 'Shop' });
  });

  /**
   * The request's answer and its commands, without the credential stamps read at most once a second
   * (CredentialChanges) and the chat notices written off the request (ChatNotifier).
   */
  async function commandsOf(request: () => Promise<Answer>): Promise<{ answer: Answer; commands: string[] }> {
    let answer: Answer = { status: 0, body: {} };
    const seen = await commandsDuring(t.connection, async () => {
      answer = await request();
    });
    const commands = seen.filter(
      (command) => command !== 'find credential_stamps' && command !== 'insert chat_notifications',
    );
    return { answer, commands };
  }

  /** Commands on the wants and their votes (a new key's first request also reads the key). */
  const onWants = (command: string) => / want(s|_votes)$/.test(command);

  describe('wants (API key)', () => {
    let backend: HttpClient;
    let wantId: string;
    const vote = (id = wantId, as = backend) => as.post(`/${app.id}/wants/${id}/vote`);
    const storedCount = async () =>
      (await t.connection.collection('wants').findOne({ _id: new Types.ObjectId(wantId) }))?.voteCount;
    const storedVotes = () =>
      t.connection.collection('want_votes').countDocuments({ wantId: new Types.ObjectId(wantId) });

    beforeEach(async () => {
      const key = await seedApiKey(t, app.id);
      backend = t.http.with({ 'x-api-key': key.value, 'x-user-id': 'u1', 'x-forwarded-for': nextIp() });
      const created = await backend.post(`/${app.id}/wants`, {
        title: 'Dark mode',
        description: 'Please',
        category: 'ui',
      });
      expect(created.status).toBe(201);
      wantId = String(created.body.data._id);
    });

    it('votes with the want’s scoped lookup, the insert and the counter’s update', async () => {
      const { answer, commands } = await commandsOf(() => vote());
      expect(answer.body).toEqual({ success: true, data: { voteCount: 1, hasVoted: true } });
      expect(commands).toEqual(['find wants', 'insert want_votes', 'findAndModify wants']);
      expect(await storedCount()).toBe(1);
    });

    it('takes a vote back with the lookup, the refused insert, the delete and the counter’s update', async () => {
      await vote();
      const { answer, commands } = await commandsOf(() => vote());
      expect(answer.body).toEqual({ success: true, data: { voteCount: 0, hasVoted: false } });
      expect(commands).toEqual([
        'find wants',
        'insert want_votes',
        'delete want_votes',
        'findAndModify wants',
      ]);
      expect(await storedCount()).toBe(0);
      expect(await storedVotes()).toBe(0);
    });

    it('answers 404 for an unknown want or another app’s, and leaves no vote behind', async () => {
      const other = await seedApp(t, { name: 'Other' });
      const otherKey = await seedApiKey(t, other.id);
      const otherBackend = t.http.with({ 'x-api-key': otherKey.value, 'x-user-id': 'u1' });
      const unknown = await commandsOf(() => vote('a'.repeat(24)));
      expect(unknown.answer).toMatchObject({
        status: 404,
        body: { success: false, error: 'Want not found' },
      });
      expect(unknown.commands.filter(onWants)).toEqual(['find wants']);
      // Another app's backend writes nothing for a want it cannot see.
      const foreign = await commandsOf(() => otherBackend.post(`/${other.id}/wants/${wantId}/vote`));
      expect(foreign.answer.status).toBe(404);
      expect(foreign.commands.filter(onWants)).toEqual(['find wants']);
      expect(await storedVotes()).toBe(0);
      expect(await storedCount()).toBe(0);
      // The app's own voter u1 is not taken for the other app's u1.
      expect((await vote()).body.data).toEqual({ voteCount: 1, hasVoted: true });
      expect((await otherBackend.post(`/${other.id}/wants/${wantId}/vote`)).status).toBe(404);
      expect((await backend.get(`/${app.id}/wants/${wantId}`)).body.data).toMatchObject({
        voteCount: 1,
        hasVoted: true,
      });
    });

    it('reads a want, a page of the board and creates a want with one command each', async () => {
      const detail = await commandsOf(() => backend.get(`/${app.id}/wants/${wantId}`));
      expect(detail.answer.status).toBe(200);
      expect(detail.commands).toEqual(['aggregate wants']);
      const list = await commandsOf(() => backend.get(`/${app.id}/wants`));
      expect(list.answer.status).toBe(200);
      expect(list.commands).toEqual(['aggregate wants']);
      const created = await commandsOf(() =>
        backend.post(`/${app.id}/wants`, { title: 'Export', description: 'CSV', category: 'data' }),
      );
      expect(created.answer.status).toBe(201);
      expect(created.commands).toEqual(['insert wants']);
    });
  });

  describe('feedback (no credential)', () => {
    it('stores a submission with its insert alone (the app comes from the cache)', async () => {
      const submit = () =>
        t.http.post(
          `/${app.id}/feedback`,
          { type: 'bug', subject: 'Crash', message: 'On save' },
          { headers: { 'x-forwarded-for': nextIp() } },
        );
      expect((await submit()).status).toBe(201);
      const { answer, commands } = await commandsOf(submit);
      expect(answer.status).toBe(201);
      expect(commands).toEqual(['insert feedback']);
    });
  });

  describe('tickets of an app', () => {
    let user: Session;
    let ticketId: string;
    /** The audit trail of a staff write (src/audit/) is not the route's own work. */
    const withoutAudit = (commands: string[]) => commands.filter((command) => !/ audit_/.test(command));

    beforeEach(async () => {
      user = await createSession(t, Role.User);
      const created = await user.http.post(`/${app.id}/tickets`, {
        email: 'customer@example.com',
        subject: 'Cannot log in',
        message: 'The button does nothing.',
      });
      expect(created.status).toBe(201);
      ticketId = String(created.body.data._id);
      await user.http.post(`/${app.id}/tickets/${ticketId}/messages`, { content: 'Still broken' });
    });

    it('reads a page and its total in one command, without the threads', async () => {
      const { answer, commands } = await commandsOf(() => user.http.get(`/${app.id}/tickets?limit=1`));
      expect(answer.status).toBe(200);
      expect(commands).toEqual(['aggregate tickets']);
      expect(answer.body.pagination).toMatchObject({ page: 1, limit: 1, total: 1, pages: 1 });
      const [listed] = answer.body.data as Record<string, unknown>[];
      expect(listed).toMatchObject({ _id: ticketId, subject: 'Cannot log in' });
      expect(listed).not.toHaveProperty('messages');
    });

    it('reads a ticket, its thread, and adds a message with one command each', async () => {
      const read = await commandsOf(() => user.http.get(`/${app.id}/tickets/${ticketId}`));
      expect(read.answer.status).toBe(200);
      expect(read.commands).toEqual(['find tickets']);
      const thread = await commandsOf(() => user.http.get(`/${app.id}/tickets/${ticketId}/messages`));
      expect(thread.answer.status).toBe(200);
      expect(thread.commands).toEqual(['find tickets']);
      const added = await commandsOf(() =>
        user.http.post(`/${app.id}/tickets/${ticketId}/messages`, { content: 'Works now' }),
      );
      expect(added.answer.status).toBe(201);
      expect(withoutAudit(added.commands)).toEqual(['findAndModify tickets']);
    });

    it('resolves a ticket with one update, keeping the first resolution time', async () => {
      const setStatus = (status: string) =>
        commandsOf(() => user.http.patch(`/${app.id}/tickets/${ticketId}/status`, { status }));
      const resolved = await setStatus('resolved');
      expect(resolved.answer.status).toBe(200);
      expect(withoutAudit(resolved.commands)).toEqual(['findAndModify tickets']);
      const resolvedAt = (resolved.answer.body.data as { resolvedAt: string }).resolvedAt;
      expect(typeof resolvedAt).toBe('string');
      const closed = await setStatus('closed');
      expect(withoutAudit(closed.commands)).toEqual(['findAndModify tickets']);
      expect(closed.answer.body.data).toMatchObject({ status: 'closed', resolvedAt });
      const reopened = await setStatus('pending');
      expect(reopened.answer.body.data).not.toHaveProperty('resolvedAt');
    });
  });
});
