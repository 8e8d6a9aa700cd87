import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { SECURITY_HEADERS } from '../src/common/http/edge-errors';
import { createTestApp, TestApp } from './helpers/app';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Sends bytes as they are (no client library would send these) and reads the one answer. */
function rawRequest(port: number, bytes: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) return reject(new Error(`No HTTP answer: ${JSON.stringify(received)}`));
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      const text = rest.join('\r\n\r\n');
      resolve({ status, headers, body: text ? (JSON.parse(text) as unknown) : undefined });
    });
    socket.write(bytes, () => {
      // Answers to a request that stays open come back with keep-alive: end our side after the answer.
      socket.once('data', () => setTimeout(() => socket.end(), 50));
    });
  });
}

/**
 * Router and HTTP-parser errors (docs/decisions/security-hostile-input.md): the envelope, the security
 * headers, a request id.
 */
describe('Errors raised before the application sees a request', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const expectAnsweredLikeAnyError = (res: RawResponse, status: number) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ success: false, error: expect.any(String) });
    expect(res.headers['x-request-id']).toMatch(/^[\w.-]+$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  };

  it.each([
    ['TRACE /health', 'GET, HEAD'],
    ['PUT /health/', 'GET, HEAD'],
    ['TRACE /admin/apps/my-app?x=1', 'GET, HEAD, PATCH, DELETE'],
    ['DELETE /joinlist', 'POST'],
  ])('answers %s with 405, the envelope and Allow: %s', async (request, allow) => {
    const res = await rawRequest(port, `${request} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expectAnsweredLikeAnyError(res, 405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body).toEqual({
      success: false,
      error: `${request.split(' ')[0]} is not allowed here; allowed: ${allow}`,
    });
  });

  it('answers an unknown path 404, whatever the method', async () => {
    for (const method of ['GET', 'TRACE', 'PUT']) {
      const res = await rawRequest(
        port,
        `${method} /no-such-path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(404);
      expect(res.headers.allow).toBeUndefined();
    }
  });

  it('answers 400 to a path that does not decode', async () => {
    const res = await rawRequest(port, 'GET /tickets/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectAnsweredLikeAnyError(res, 400);
    expect(res.body).toEqual({ success: false, error: 'Malformed URL' });
  });

  it('answers 414 to a path segment over 600 characters', async () => {
    const id = 'a'.repeat(601);
    const res = await rawRequest(
      port,
      `GET /admin/apps/${id} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expectAnsweredLikeAnyError(res, 414);
  });

  it('answers 431 to oversized headers', async () => {
    const res = await rawRequest(
      port,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    expectAnsweredLikeAnyError(res, 431);
  });

  it.each([
    ['a Content-Length that is not a number', 'Content-Length: ten'],
    ['two Content-Lengths that disagree', 'Content-Length: 2\r\nContent-Length: 5'],
  ])('answers 400 to %s', async (_label, header) => {
    const res = await rawRequest(port, `POST /auth/login HTTP/1.1\r\nHost: x\r\n${header}\r\n\r\n{}`);
    expectAnsweredLikeAnyError(res, 400);
    expect(res.body).toEqual({ success: false, error: 'Malformed HTTP request' });
  });

  it('answers 400 to garbage instead of HTTP', async () => {
    expectAnsweredLikeAnyError(await rawRequest(port, 'HELLO\r\n\r\n'), 400);
  });

  it('gives an ordinary 404 the same headers (the reference the answers above are held to)', async () => {
    const res = await rawRequest(port, 'GET /no-such-route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectAnsweredLikeAnyError(res, 404);
    // The header set written on the socket is exactly what ordinary answers carry (helmet's headers, computed
    // once).
    expect(Object.keys(SECURITY_HEADERS).length).toBeGreaterThan(8);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(res.headers[name]).toBe(value);
  });
});
