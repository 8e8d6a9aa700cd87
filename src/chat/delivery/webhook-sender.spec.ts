import type { ConfigService } from '@nestjs/config';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { AppConfig } from '../../config/env';
import { HostResolver } from './host-resolver';
import { WebhookAddressPolicy } from './webhook-address-policy';
import { WebhookSender } from './webhook-sender';

/**
 * Receivers that misbehave at the network level: every call ends (at the timeout when nothing answers)
 * with a failure worth another attempt (not `permanent`), and nothing keeps a socket open afterwards.
 */
describe('WebhookSender against receivers that hang, refuse or reset', () => {
  const TIMEOUT_MS = 500;
  const config = { get: () => 'test' } as unknown as ConfigService<AppConfig, true>;
  const sender = new WebhookSender(new WebhookAddressPolicy(config, new HostResolver()));
  const servers: Server[] = [];
  const sockets = new Set<Socket>();

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const listen = async (server: Server) => {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  };

  const attempt = (url: string) =>
    sender.post(url, { text: 'hello' }, TIMEOUT_MS).then(
      () => undefined,
      (e: Error & { permanent?: boolean }) => e,
    );

  /**
   * The receivers here never answer, so a call that ends with the timeout's error was cut by it: no clock
   * is read (a loaded machine may take longer to get there, and that is no failure).
   */
  const expectRetryable = (error: (Error & { permanent?: boolean }) | undefined, message: RegExp) => {
    expect(error?.message).toMatch(message);
    expect(error?.permanent).not.toBe(true);
  };

  it('cuts a receiver that accepts the connection and never reads or answers', async () => {
    const url = await listen(createServer(() => undefined));
    expectRetryable(await attempt(url), /No answer within 500 ms/);
  });

  it('cuts a receiver that sends its status and never ends the body', async () => {
    const url = await listen(
      createHttpServer((_request, response) => {
        response.writeHead(200);
        response.write('partial');
      }),
    );
    expectRetryable(await attempt(url), /No answer within 500 ms/);
  });

  it('fails a refused connection at once, as a retryable failure', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    expectRetryable(await attempt(`http://127.0.0.1:${port}/hook`), /ECONNREFUSED/);
  });

  it('cuts a call whose host name never resolves', async () => {
    const stuckResolver = new HostResolver();
    stuckResolver.lookupAll = () => new Promise(() => undefined);
    const stuck = new WebhookSender(new WebhookAddressPolicy(config, stuckResolver));
    const error = await stuck.post('http://hooks.example.test/hook', {}, TIMEOUT_MS).catch((e: Error) => e);
    expectRetryable(error as Error, /No answer within 500 ms/);
  });

  it('fails a connection the receiver resets, as a retryable failure', async () => {
    const url = await listen(createServer((socket) => socket.resetAndDestroy()));
    expectRetryable(await attempt(url), /ECONNRESET|socket hang up/);
  });
});
