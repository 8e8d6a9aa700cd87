import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatNotifier } from '../src/chat/chat-notifier';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { CHAT_DELIVERY_OPTIONS } from '../src/chat/delivery/delivery-options';
import { EmailService } from '../src/email/email.service';
import { HealthService } from '../src/health/health.service';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { testDeliveryOptions, waitForNotifications } from './helpers/chat';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions } from './helpers/session';
import { startWebhookReceiver, WebhookReceiver } from './helpers/webhook-receiver';

const packageVersion = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

const emptyQueue = { pending: 0, processing: 0, completed: 0, failed: 0, dead: 0, capped: false };

describe('GET /health and the OpenAPI document', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // A failed delivery waits a minute before its retry, so it stays `failed` while the test reads it.
    const chatOptions = testDeliveryOptions({ backoff: { baseMs: 60_000, maxMs: 60_000 } });
    t = await createTestApp({ overrides: [{ provide: CHAT_DELIVERY_OPTIONS, useValue: chatOptions }] });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  /** The figures come from the background refresh (every 10 s): a test takes a fresh one after it acted. */
  const refreshed = () => t.app.get(HealthService).refresh();

  it('reports the spec record plus version, the e-mail worker and the chat backlog', async () => {
    await resetDatabase(t.connection);
    await refreshed();
    const res = await t.http.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      timestamp: expect.any(String),
      uptime: expect.any(Number),
      memory: { rss: expect.any(String), heapUsed: expect.any(String), heapTotal: expect.any(String) },
      database: { connected: true, modelsCount: expect.any(Number) },
      version: packageVersion,
      // The tests run without the background worker (test/setup/test-env.ts) and no run has happened yet.
      emailWorker: { enabled: false, lastRun: null, queue: emptyQueue },
      chatBacklog: { pending: 0, failed: 0 },
      checkedAt: expect.any(String),
    });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('counts the e-mail queue by status and records when the last worker run ended', async () => {
    await resetDatabase(t.connection);
    const email = t.app.get(EmailService);
    await email.enqueueEmail({ to: 'one@example.com', subject: 'Hello', text: 'One' });
    await email.enqueueEmail({ to: 'two@example.com', subject: 'Hello', text: 'Two' });
    // No planner has this kind: the worker ends the job `dead`.
    await email.enqueueBatchPlan({ kind: 'no-such-planner' });

    await refreshed();
    const before = (await t.http.get('/health')).body.emailWorker;
    expect(before).toEqual({ enabled: false, lastRun: null, queue: { ...emptyQueue, pending: 3 } });

    const startedAt = Date.now();
    await drainEmailQueue(t);
    await refreshed();
    const after = (await t.http.get('/health')).body.emailWorker;
    expect(after.queue).toEqual({ ...emptyQueue, completed: 2, dead: 1 });
    expect(new Date(after.lastRun).toISOString()).toBe(after.lastRun);
    expect(new Date(after.lastRun).getTime()).toBeGreaterThanOrEqual(startedAt);
    expect(new Date(after.lastRun).getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('counts the chat notifications waiting for delivery (pending, then failed)', async () => {
    await resetDatabase(t.connection);
    const { admin } = await createSessions(t);
    const failing = await seedApp(t);
    const logged = await seedApp(t);
    receiver.answer = () => ({ status: 500 });
    const rule = { appId: failing.id, channel: 'tickets', webhookUrl: `${receiver.url}/hook` };
    expect((await admin.http.post('/admin/chat-routing', rule)).status).toBe(201);
    const notifier = t.app.get(ChatNotifier);
    const notice = { channel: 'tickets' as const, event: 'ticket.created', summary: 'New ticket' };
    notifier.notify({ ...notice, appId: failing.id });
    notifier.notify({ ...notice, appId: failing.id });
    notifier.notify({ ...notice, appId: logged.id });
    await waitForNotifications(t, 3);
    await refreshed();
    expect((await t.http.get('/health')).body.chatBacklog).toEqual({ pending: 3, failed: 0 });

    // The rule's receiver answers 500 (retried later); the other app has no destination but the log.
    await t.app.get(ChatDeliveryWorker).processDue();
    expect(receiver.calls).toHaveLength(2);
    await refreshed();
    expect((await t.http.get('/health')).body.chatBacklog).toEqual({ pending: 0, failed: 2 });
  });

  it('answers GET /health/live in the envelope without the database record', async () => {
    const res = await t.http.get('/health/live');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { status: 'ok', uptime: expect.any(Number) } });
    expect(res.body.data.uptime).toBeGreaterThan(0);
  });

  it('serves Swagger UI at /docs and the document at /docs-json with the four security schemes', async () => {
    const ui = await t.http.get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger/i);
    const doc = await t.http.get('/docs-json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.components.securitySchemes).sort()).toEqual([
      'api-key',
      'app-key',
      'bearer',
      'end-user',
    ]);
    expect(doc.body.components.securitySchemes['api-key']).toMatchObject({ in: 'header', name: 'X-API-Key' });
    expect(doc.body.components.securitySchemes['app-key']).toMatchObject({ in: 'header', name: 'X-App-Key' });
  });

  it('documents a response schema for every route (envelope included)', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const missing: string[] = [];
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, { content?: unknown }> }>
    >(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const success = Object.entries(operation.responses).filter(([code]) => /^2\d\d$/.test(code));
        const documented = success.some(([, response]) => response.content);
        // A redirect's answer is its Location header (the click-tracking route has no 2xx).
        const redirects =
          success.length === 0 && Object.keys(operation.responses).some((code) => /^3\d\d$/.test(code));
        if (!documented && !redirects) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each([
    ['/users', 'isActive'],
    ['/api-keys', 'isActive'],
    ['/admin/templates', 'isActive'],
    ['/admin/apps', 'activeOnly'],
  ])('documents the %s query flag %s as a boolean', async (path, name) => {
    const doc = (await t.http.get('/docs-json')).body;
    const parameter = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    expect(parameter).toMatchObject({ in: 'query', required: false, schema: { type: 'boolean' } });
  });
});
