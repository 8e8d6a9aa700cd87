import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import { Webhook } from 'standardwebhooks';
import type { App } from '../src/apps/schemas/app.schema';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { commandsDuring, monitorDatabaseCommands } from './helpers/db-commands';
import { Role } from '../src/common/auth/roles';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSession } from './helpers/session';

const ORIGIN = 'https://www.shop.test';
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const MAIL_DOMAIN = 'mail.example.com';

/**
 * The database commands of the hot public paths, counted by the driver (docs/decisions/data-round-trips.md):
 * a change that adds a round trip to one of them fails here, however fast the machine.
 */
describe('Database round trips per request', () => {
  let t: TestApp;
  let app: App;
  let client = 0;
  const nextIp = () => `10.28.${(client += 1) >> 8}.${client & 255}`;

  beforeAll(async () => {
    monitorDatabaseCommands();
    process.env.WEBHOOK_SECRET = SECRET;
    process.env.MAIL_FROM = `News <news@${MAIL_DOMAIN}>`;
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    delete process.env.WEBHOOK_SECRET;
  });
  beforeEach(async () => {
    await resetDatabase(t.connection);
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
  });

  describe('provider webhook', () => {
    /** Sent messages of one campaign, as the worker leaves them (job and ledger entry); their Message-IDs. */
    async function sentMessages(count: number): Promise<{ campaignId: string; messageIds: string[] }> {
      const campaignId = String(new Types.ObjectId());
      const ids = Array.from({ length: count }, () => new Types.ObjectId());
      const now = new Date();
      await t.connection.collection('email_messages').insertMany(
        ids.map((_id, i) => ({
          _id,
          idempotencyKey: `campaign:${campaignId}:${i}`,
          to: `reader-${i}@example.com`,
          appId: app.id,
          campaignId,
          contactId: String(new Types.ObjectId()),
          messageId: `${String(_id)}@${MAIL_DOMAIN}`,
          createdAt: now,
          lastEventAt: now,
          expiresAt: new Date(now.getTime() + 86_400_000),
        })),
      );
      return { campaignId, messageIds: ids.map((id) => `${String(id)}@${MAIL_DOMAIN}`) };
    }

    const deliver = (messageId: string, webhookId = `msg_${randomBytes(8).toString('hex')}`) => {
      const body = JSON.stringify({
        type: 'email.delivered',
        created_at: new Date().toISOString(),
        data: { email_id: messageId },
      });
      const now = new Date();
      return t.http.request('POST', '/email-events/primary-provider', {
        payload: body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': webhookId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(SECRET).sign(webhookId, now, body),
        },
      });
    };

    it('stores concurrent deliveries together: at most 3 commands per event, each event stored and counted', async () => {
      const EVENTS = 20;
      const { campaignId, messageIds } = await sentMessages(EVENTS);
      let answers: { status: number; body: Record<string, unknown> }[] = [];
      const commands = await commandsDuring(t.connection, async () => {
        answers = await Promise.all(messageIds.map((messageId) => deliver(messageId)));
      });
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ success: true, processed: true });
      }
      // One event per delivery, all counted (the 2xx meant stored: nothing is written after the answers).
      expect(await t.connection.collection('email_events').countDocuments({ campaignId })).toBe(EVENTS);
      const counters = await t.connection
        .collection<{ _id: string; totals?: Record<string, number> }>('email_campaign_counters')
        .findOne({ _id: campaignId });
      expect(counters?.totals).toMatchObject({ delivered: EVENTS });
      expect(commands.length).toBeLessThanOrEqual(3 * EVENTS);
    });

    it('answers a repeat inside the same burst processed:false with the first delivery’s event', async () => {
      const { messageIds } = await sentMessages(1);
      const [first, repeat] = await Promise.all([
        deliver(messageIds[0], 'msg_same'),
        deliver(messageIds[0], 'msg_same'),
      ]);
      const outcomes = [first.body, repeat.body].sort((a, b) => Number(b.processed) - Number(a.processed));
      expect(outcomes[0]).toMatchObject({ processed: true });
      expect(outcomes[1]).toEqual({ success: true, processed: false, eventId: outcomes[0].eventId });
      expect(await t.connection.collection('email_events').countDocuments({ webhookId: 'msg_same' })).toBe(1);
    });
  });

  describe('provider webhook after a failure', () => {
    it('processes again a delivery whose receipt was left unfinished (its request failed, the receipt stayed)', async () => {
      const messageId = `${String(new Types.ObjectId())}@${MAIL_DOMAIN}`;
      const jobId = new Types.ObjectId(messageId.split('@')[0]);
      const now = new Date();
      await t.connection.collection('email_messages').insertOne({
        _id: jobId,
        idempotencyKey: `left-over:${String(jobId)}`,
        to: 'left@example.com',
        appId: app.id,
        campaignId: null,
        contactId: null,
        messageId,
        createdAt: now,
        lastEventAt: now,
        expiresAt: new Date(now.getTime() + 86_400_000),
      });
      // What a first delivery leaves when storing its event failed and taking its receipt back failed too.
      await t.connection
        .collection<{ _id: string; eventId: string; receivedAt: Date; done: boolean }>(
          'email_webhook_receipts',
        )
        .insertOne({ _id: 'msg_left', eventId: String(new Types.ObjectId()), receivedAt: now, done: false });
      const body = JSON.stringify({
        type: 'email.bounced',
        created_at: now.toISOString(),
        data: { email_id: messageId, to: ['left@example.com'], bounce: { type: 'Permanent' } },
      });
      const res = await t.http.request('POST', '/email-events/primary-provider', {
        payload: body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_left',
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(SECRET).sign('msg_left', now, body),
        },
      });
      expect(res.body).toMatchObject({ success: true, processed: true });
      expect(await t.connection.collection('email_events').countDocuments({ webhookId: 'msg_left' })).toBe(1);
      expect(await t.connection.collection('email_suppressions').countDocuments({})).toBe(1);
      const receipt = await t.connection
        .collection<{ _id: string; done?: boolean }>('email_webhook_receipts')
        .findOne({ _id: 'msg_left' });
      expect(receipt?.done).toBe(true);
    });
  });

  describe('POST /joinlist', () => {
    it('signs up a new person with one read of the app, one of the suppression list, of the template and of the link domain, one insert carrying the consent event, and the welcome job with its ledger entry', async () => {
      const page = t.http.with({ 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': nextIp() });
      let status = 0;
      const commands = await commandsDuring(t.connection, async () => {
        status = (await page.post('/joinlist', { email: 'new-reader@example.com', firstName: 'New' })).status;
      });
      expect(status).toBe(200);
      // The chat notice is written off the request (ChatNotifier), and the credential stamps are read at
      // most once a second (CredentialChanges): either may or may not fall inside the window.
      const ofRequest = commands
        .filter((command) => command !== 'insert chat_notifications' && command !== 'find credential_stamps')
        .sort();
      expect(ofRequest).toEqual([
        'find apps',
        'find email_suppressions',
        'find email_templates',
        // The app's link domain (src/sender-domains/link-domains.ts), kept 30 s per instance after this.
        'find sender_domains',
        'insert contacts',
        'insert email_jobs',
        'insert email_messages',
      ]);
      const stored = await t.connection.collection('contacts').findOne({ email: 'new-reader@example.com' });
      expect(stored?.consentHistory).toHaveLength(1);
      expect(await t.connection.collection('email_jobs').countDocuments({})).toBe(1);
    });
  });

  describe('credentials', () => {
    /** A request's commands, without the stamps read at most once a second (CredentialChanges). */
    const ofRequest = (commands: string[]) =>
      commands.filter((command) => command !== 'find credential_stamps');

    it('reads an API key and its app in one command, then serves them from memory', async () => {
      const key = await seedApiKey(t, app.id);
      const http = t.http.with({ 'x-api-key': key.value, 'x-forwarded-for': nextIp() });
      const first = await commandsDuring(t.connection, async () => {
        expect((await http.get(`/${app.id}/wants`)).status).toBe(200);
      });
      expect(ofRequest(first).filter((command) => /\b(api_keys|apps)$/.test(command))).toEqual([
        'aggregate api_keys',
        // The key's use, recorded at most once a minute.
        'update api_keys',
      ]);
      const again = await commandsDuring(t.connection, async () => {
        expect((await http.get(`/${app.id}/wants`)).status).toBe(200);
      });
      // The page, its total and the caller's votes: one aggregation, and nothing for the credential.
      expect(ofRequest(again)).toEqual(['aggregate wants']);
      const want = await t.connection
        .collection('wants')
        .insertOne({ appId: app.id, title: 'Dark mode', description: 'Please', voteCount: 0 });
      const detail = await commandsDuring(t.connection, async () => {
        expect((await http.get(`/${app.id}/wants/${String(want.insertedId)}`)).status).toBe(200);
      });
      expect(ofRequest(detail)).toEqual(['aggregate wants']);
    });

    it('reads a staff user once, then serves /auth/me from memory; an unknown API key is remembered too', async () => {
      const admin = await createSession(t, Role.Admin);
      expect((await admin.http.get('/auth/me')).status).toBe(200);
      const again = await commandsDuring(t.connection, async () => {
        expect((await admin.http.get('/auth/me')).status).toBe(200);
      });
      expect(ofRequest(again)).toEqual([]);

      const unknown = t.http.with({
        'x-api-key': `sk_${app.id}_${'0'.repeat(64)}`,
        'x-forwarded-for': nextIp(),
      });
      expect((await unknown.get(`/${app.id}/wants`)).status).toBe(401);
      const repeated = await commandsDuring(t.connection, async () => {
        expect((await unknown.get(`/${app.id}/wants`)).status).toBe(401);
      });
      expect(ofRequest(repeated)).toEqual([]);
    });
  });
});
