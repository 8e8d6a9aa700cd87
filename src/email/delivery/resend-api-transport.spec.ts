import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OutgoingMail } from './mail-transport';
import { emailsUrl, ResendApiError, ResendApiTransport } from './resend-api-transport';

const mail: OutgoingMail = {
  messageId: 'job-1@example.com',
  idempotencyKey: 'email-job/job-1',
  from: 'news@example.com',
  to: 'ada@example.com',
  subject: 'News',
  text: 'Hi',
  headers: {},
};

/**
 * How the API's answers are classified: what the worker then does is in docs/operations/email-transports.md.
 */
describe('ResendApiTransport', () => {
  let server: Server;
  let transport: ResendApiTransport;
  let answer: (response: ServerResponse) => void;
  let port: number;
  const paths: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      paths.push(request.url ?? '');
      request.resume();
      request.on('end', () => answer(response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ({ port } = server.address() as AddressInfo);
    transport = new ResendApiTransport({
      apiKey: 're_secret',
      baseUrl: `http://127.0.0.1:${port}`,
      // Far above any answer's time on a loaded machine; the time limit has a test of its own.
      timeoutMs: 10_000,
      maxConnections: 2,
    });
  });

  afterAll(async () => {
    transport.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const json = (status: number, body: unknown) => (response: ServerResponse) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  /** The failure of one send, and whether the transport calls it an outage. */
  async function failure(): Promise<{ error: Error; unreachable: boolean }> {
    const error = await transport.send(mail).then(
      () => {
        throw new Error('the send succeeded');
      },
      (reason: Error) => reason,
    );
    return { error, unreachable: transport.unreachable(error) };
  }

  it.each(['/v1', '/v1/', '/proxy/resend/v1'])('keeps the path of a base URL ending %s', async (path) => {
    const behindPath = new ResendApiTransport({
      apiKey: 're_secret',
      baseUrl: `http://127.0.0.1:${port}${path}`,
      timeoutMs: 10_000,
      maxConnections: 1,
    });
    answer = json(200, { id: 'a-id' });
    paths.length = 0;
    try {
      await behindPath.send(mail);
    } finally {
      behindPath.onApplicationShutdown();
    }
    expect(paths).toEqual([`${path.replace(/\/$/, '')}/emails`]);
  });

  it('sends to /emails under a bare host, with or without its slash', () => {
    expect(emailsUrl('https://api.resend.com').href).toBe('https://api.resend.com/emails');
    expect(emailsUrl('https://api.resend.com/').href).toBe('https://api.resend.com/emails');
  });

  it('records the id of a success', async () => {
    answer = json(200, { id: '49a3999c-0ce1-4ea6-ab68-afcd6dc2e794' });
    await expect(transport.send(mail)).resolves.toMatchObject({
      accepted: ['ada@example.com'],
      providerMessageId: '49a3999c-0ce1-4ea6-ab68-afcd6dc2e794',
    });
  });

  it.each([
    [429, 'rate_limit_exceeded'],
    [500, 'application_error'],
    [401, 'missing_api_key'],
    [403, 'invalid_api_key'],
  ])('calls %i %s an outage', async (status, name) => {
    answer = json(status, { statusCode: status, name, message: name });
    const { error, unreachable } = await failure();
    expect(unreachable).toBe(true);
    expect(error).toMatchObject({ permanent: false, status });
  });

  it('calls a validation error permanent, with Resend’s message, and never names the key', async () => {
    answer = json(422, { statusCode: 422, name: 'validation_error', message: 'Invalid `to` field.' });
    const { error, unreachable } = await failure();
    expect(unreachable).toBe(false);
    expect(error).toBeInstanceOf(ResendApiError);
    expect(error).toMatchObject({
      permanent: true,
      message: 'Resend API 422 validation_error: Invalid `to` field.',
    });
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
      're_secret',
    );
  });

  it('retries a key still in progress as the message’s own failure, not an outage', async () => {
    answer = json(409, { statusCode: 409, name: 'concurrent_idempotent_requests', message: 'busy' });
    const { error, unreachable } = await failure();
    expect(unreachable).toBe(false);
    expect(error).toMatchObject({ permanent: false, kind: 'retry' });
  });

  it('ends a request without an answer at its time limit, as an outage', async () => {
    answer = () => undefined;
    const impatient = new ResendApiTransport({
      apiKey: 're_secret',
      baseUrl: `http://127.0.0.1:${port}`,
      timeoutMs: 200,
      maxConnections: 1,
    });
    try {
      const error = await impatient.send(mail).then(
        () => new Error('the send succeeded'),
        (reason: Error) => reason,
      );
      expect(error.message).toBe('No Resend API answer within 200 ms');
      expect(impatient.unreachable(error)).toBe(true);
    } finally {
      impatient.onApplicationShutdown();
    }
  });
});
