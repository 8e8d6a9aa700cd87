import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Types } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { commandsDuring, monitorDatabaseCommands } from './helpers/db-commands';
import { seedApiKey, seedApp } from './helpers/factories';

const ORIGIN = 'https://www.shop.test';
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

describe('explore', () => {
  let t: TestApp;
  let app: App;
  beforeAll(async () => {
    monitorDatabaseCommands();
    process.env.WEBHOOK_SECRET = SECRET;
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
  });

  it('joinlist', async () => {
    const page = t.http.with({ 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': '10.1.1.1' });
    await page.post('/joinlist', { email: 'warm@example.com' });
    const c = await commandsDuring(t.connection, async () => {
      const res = await page.post('/joinlist', { email: 'new@example.com', firstName: 'N' });
      expect(res.status).toBe(200);
    });
    console.log('joinlist', c);
  });

  it('wants', async () => {
    const key = await seedApiKey(t, app.id);
    const http = t.http.with({ 'x-api-key': key.value, 'x-forwarded-for': '10.1.1.2' });
    await http.get(`/${app.id}/wants`);
    const c = await commandsDuring(t.connection, async () => {
      const res = await http.get(`/${app.id}/wants`);
      expect(res.status).toBe(200);
    });
    console.log('wants', c);
  });

  it('webhook', async () => {
    const jobId = new Types.ObjectId();
    const campaignId = String(new Types.ObjectId());
    await t.connection.collection('email_jobs').insertOne({
      _id: jobId, type: 'email.send', status: 'completed', priority: 0,
      payload: { to: 'r@example.com', contactId: String(new Types.ObjectId()) }, attempts: 1, maxAttempts: 5,
      idempotencyKey: `x:${String(jobId)}`, appId: app.id, campaignId, messageId: `${String(jobId)}@mail.example.com`,
      scheduledAt: new Date(), createdAt: new Date(), updatedAt: new Date(),
    });
    const send = (id: string) => {
      const body = JSON.stringify({ type: 'email.delivered', created_at: new Date().toISOString(), data: { email_id: `${String(jobId)}@mail.example.com` } });
      const now = new Date();
      return t.http.request('POST', '/email-events/primary-provider', { payload: body, headers: {
        'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(SECRET).sign(id, now, body) } });
    };
    const c = await commandsDuring(t.connection, async () => {
      const res = await send('msg_1');
      expect(res.body.processed).toBe(true);
    });
    console.log('webhook', c);
  });
});
