import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { App } from '../src/apps/schemas/app.schema';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { CHAT_DELIVERY_OPTIONS } from '../src/chat/delivery/delivery-options';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import {
  drainChat,
  makeRetriesDue,
  notifications,
  RETRY_WAIT_MS,
  testDeliveryOptions,
  waitForNotifications,
} from './helpers/chat';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { settles } from './helpers/wait';

/**
 * A chat endpoint that is down (refused) or hangs: each delivery attempt ends (at the timeout when it hangs)
 * as a failed attempt, and the notification is delivered once the endpoint answers again.
 */
describe('Chat delivery while the endpoint refuses or hangs', () => {
  let t: TestApp;
  let admin: Session;
  let app: App;
  let ip = 0;
  // Retries wait a minute: one run makes one attempt however slow the machine (makeRetriesDue ends the wait).
  const options = testDeliveryOptions({ timeoutMs: 400, backoff: RETRY_WAIT_MS });
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  beforeAll(async () => {
    t = await createTestApp({ overrides: [{ provide: CHAT_DELIVERY_OPTIONS, useValue: options }] });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin } = await createSessions(t));
    app = await seedApp(t, { name: 'My Shop' });
  });
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  const freePort = async () => {
    const probe = createNetServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return port;
  };
  /** An endpoint on `port` answering each call as `answer` says ('hang': never). */
  const serve = async (port: number, answer: (call: IncomingMessage) => number | 'hang') => {
    const calls: string[] = [];
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const status = answer(request);
        calls.push(String(status));
        if (status !== 'hang') response.writeHead(status).end('ok');
      });
    });
    server.on('connection', (socket: Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    return calls;
  };
  const notify = async (port: number) => {
    const route = await admin.http.post('/admin/chat-routing', {
      appId: app.id,
      channel: 'feedback',
      webhookUrl: `http://127.0.0.1:${port}/hook`,
    });
    expect(route.status).toBe(201);
    const res = await t.http.post(
      `/${app.id}/feedback`,
      { type: 'bug', subject: 'Crash', message: 'It crashes.' },
      { headers: { 'x-forwarded-for': `198.51.100.${++ip % 250}` } },
    );
    expect(res.status).toBe(201);
    await waitForNotifications(t, 1);
  };
  /** One delivery run; it must end although the endpoint may never answer. */
  const run = async () => expect(await settles(t.app.get(ChatDeliveryWorker).processDue())).toBe(true);

  it('records a refused connection as a failed attempt and delivers once the endpoint is up', async () => {
    const port = await freePort();
    await notify(port);
    await run();
    const [failed] = await notifications(t);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed.lastError).toMatch(/ECONNREFUSED/);

    const calls = await serve(port, () => 200);
    await makeRetriesDue(t);
    await drainChat(t);
    expect(calls).toEqual(['200']);
    expect((await notifications(t))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('cuts an endpoint that hangs at the timeout, and delivers when it answers', async () => {
    const port = await freePort();
    let hang = true;
    const calls = await serve(port, () => (hang ? 'hang' : 200));
    await notify(port);
    // The endpoint never answers: the run ending at all, with this error, is the timeout at work.
    await run();
    expect((await notifications(t))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: `No answer within ${options.timeoutMs} ms`,
    });

    hang = false;
    await makeRetriesDue(t);
    await drainChat(t);
    expect(calls).toEqual(['hang', '200']);
    expect((await notifications(t))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });
});
