import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { OutgoingMail } from '../src/email/delivery/mail-transport';
import { SmtpTransport } from '../src/email/delivery/smtp-transport';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { settles } from './helpers/wait';

/**
 * The SMTP transport against a real server that is down, comes back, or accepts connections and never
 * answers: every send ends (sent, or failed at the send limit), and sending resumes by itself.
 */
describe('SmtpTransport under SMTP faults', () => {
  const SEND_LIMIT_MS = 1_500;
  const POOL = 3;
  /** The sends below name no stream: they go to the transactional pool. */
  const POOLS = { transactional: POOL, broadcast: POOL };
  let transport: SmtpTransport | undefined;
  let smtp: TestSmtpServer | undefined;
  const servers: Server[] = [];

  afterEach(async () => {
    transport?.onApplicationShutdown();
    transport = undefined;
    await smtp?.close();
    smtp = undefined;
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const mail = (n: number): OutgoingMail => ({
    idempotencyKey: `smtp-faults/${n}`,
    messageId: `fault-${n}@example.com`,
    from: 'news@example.com',
    to: `person${n}@example.com`,
    subject: `Message ${n}`,
    text: 'Hello',
    headers: {},
  });

  /** A free loopback port: bound, then released, so the first connections to it are refused. */
  const freePort = async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return port;
  };

  /**
   * How a send ended; an unanswered send is `pending` after a safety deadline far past the send limit (it
   * only keeps a broken build from hanging the file: no clock is part of the verdict).
   */
  const settle = async (send: Promise<unknown>) => {
    let outcome: 'sent' | `failed: ${string}` | 'pending' = 'pending';
    const done = send.then(
      () => (outcome = 'sent'),
      (error: Error) => (outcome = `failed: ${error.message}`),
    );
    await settles(done);
    return { outcome };
  };

  it('fails each send while the port is refused, then sends once a server listens there', async () => {
    const port = await freePort();
    transport = new SmtpTransport(`smtp://127.0.0.1:${port}`, POOLS, { sendTimeoutMs: SEND_LIMIT_MS });

    // More sends than pooled connections, twice over: none may be left unanswered.
    const refused = await Promise.all(
      Array.from({ length: POOL * 2 }, (_, n) => settle(transport!.send(mail(n)))),
    );
    for (const { outcome } of refused) expect(outcome).toMatch(/^failed: .*ECONNREFUSED/);
    const later = await settle(transport.send(mail(100)));
    expect(later.outcome).toMatch(/^failed: .*ECONNREFUSED/);

    smtp = await startSmtpServer({ port, closeTimeoutMs: 10 });
    const resumed = await Promise.all(
      Array.from({ length: POOL * 2 }, (_, n) => settle(transport!.send(mail(200 + n)))),
    );
    expect(resumed.map((r) => r.outcome)).toEqual(Array(POOL * 2).fill('sent'));
    expect(smtp.received.map((m) => m.to[0]).sort()).toEqual(
      Array.from({ length: POOL * 2 }, (_, n) => `person${200 + n}@example.com`).sort(),
    );
  });

  it('fails a send to a server that accepts the connection and never answers within the limit', async () => {
    const silent = createServer((socket: Socket) => socket.on('error', () => undefined));
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    transport = new SmtpTransport(`smtp://127.0.0.1:${port}`, POOLS, { sendTimeoutMs: SEND_LIMIT_MS });

    const hung = await Promise.all(
      Array.from({ length: POOL + 1 }, (_, n) => settle(transport!.send(mail(n)))),
    );
    // The server never answers: each send failing with the limit's error is the limit at work.
    for (const { outcome } of hung) expect(outcome).toBe(`failed: No SMTP answer within ${SEND_LIMIT_MS} ms`);
  });

  it('fails a send whose server stops answering mid-message, and sends again on a rebuilt pool', async () => {
    smtp = await startSmtpServer({ closeTimeoutMs: 10 });
    transport = new SmtpTransport(smtp.url, POOLS, { sendTimeoutMs: SEND_LIMIT_MS });
    expect((await settle(transport.send(mail(1)))).outcome).toBe('sent');

    // The server takes the message and sits on its answer far past the limit.
    smtp.delayMs = SEND_LIMIT_MS * 3;
    const stuck = await settle(transport.send(mail(2)));
    expect(stuck.outcome).toBe(`failed: No SMTP answer within ${SEND_LIMIT_MS} ms`);

    smtp.delayMs = 0;
    expect((await settle(transport.send(mail(3)))).outcome).toBe('sent');
  });

  it('fails sends on connections the server resets, and sends again after it restarts', async () => {
    smtp = await startSmtpServer({ closeTimeoutMs: 10 });
    const port = Number(new URL(smtp.url).port);
    transport = new SmtpTransport(smtp.url, POOLS, { sendTimeoutMs: SEND_LIMIT_MS });
    const first = await Promise.all(Array.from({ length: POOL }, (_, n) => settle(transport!.send(mail(n)))));
    expect(first.map((r) => r.outcome)).toEqual(Array(POOL).fill('sent'));

    // The pooled connections die with the server; sends while it is down fail, none hangs.
    await smtp.close();
    const down = await Promise.all(
      Array.from({ length: POOL * 2 }, (_, n) => settle(transport!.send(mail(10 + n)))),
    );
    for (const { outcome } of down) expect(outcome).toMatch(/^failed: /);

    smtp = await startSmtpServer({ port, closeTimeoutMs: 10 });
    const back = await Promise.all(
      Array.from({ length: POOL * 2 }, (_, n) => settle(transport!.send(mail(20 + n)))),
    );
    expect(back.map((r) => r.outcome)).toEqual(Array(POOL * 2).fill('sent'));
  });
});
