import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { randomBytes } from 'node:crypto';
import secureJson from 'secure-json-parse';
import { Webhook } from 'standardwebhooks';
import { createTestApp, type TestApp } from './helpers/app';

/**
 * The provider webhook route checks the Standard Webhooks signature on the bytes as received, before any
 * JSON parsing, and gives each client IP a small budget of failed signatures (429 after it). Valid
 * deliveries are never counted nor refused by that budget.
 */
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const ROUTE = '/email-events/primary-provider';
/**
 * Failed signature checks a client IP may make per minute before 429
 * (src/email/events/forged-signature-budget.ts).
 */
const BUDGET = 10;

function signatureHeaders(
  body: string,
  { secret = SECRET, id = `msg_${randomBytes(6).toString('hex')}` } = {},
) {
  const sentAt = new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, sentAt, body),
  };
}

const forgedHeaders = (body: string) =>
  signatureHeaders(body, { secret: `whsec_${randomBytes(24).toString('base64')}` });

/** About 60 KB of JSON nested and wide enough to cost a parse (and the shape walk after it). */
const LARGE_BODY = JSON.stringify({
  type: 'email.delivered',
  data: { email_id: 'x@mail.test', padding: Array.from({ length: 7_500 }, (_, i) => `v${i}`) },
});

describe('Provider webhook: signature before parsing, forged-signature budget', () => {
  let t: TestApp;
  let ip = 0;
  /** A fresh client address per test, so budgets do not carry over between tests. */
  const nextClient = () => `198.51.100.${++ip}`;

  const send = (payload: string | Buffer, headers: Record<string, string>, client: string) =>
    t.http.request('POST', ROUTE, {
      payload,
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client, ...headers },
    });

  beforeAll(async () => {
    process.env.WEBHOOK_SECRET = SECRET;
    t = await createTestApp();
  });
  afterAll(async () => {
    delete process.env.WEBHOOK_SECRET;
    await t.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('refuses a forged 60 KB body with 401 without parsing its JSON', async () => {
    expect(LARGE_BODY.length).toBeGreaterThan(50_000);
    const parse = jest.spyOn(secureJson, 'parse');
    const nativeParse = jest.spyOn(JSON, 'parse');
    const res = await send(LARGE_BODY, forgedHeaders(LARGE_BODY), nextClient());
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(/signature/i) });
    expect(parse).not.toHaveBeenCalled();
    // Whoever else calls JSON.parse meanwhile (the test client, source maps), never on the request body.
    expect(nativeParse.mock.calls.filter(([text]) => String(text).includes('"padding"'))).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"type": "email.delivered", "data": '],
    ['nested 5,000 deep', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
    ['a prototype-poisoning key', '{"__proto__": {"admin": true}}'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
  ])('answers a forged body with %s 401, not the parser’s 400', async (_label, body) => {
    const res = await send(body, forgedHeaders(body.toString()), nextClient());
    expect(res.status).toBe(401);
  });

  it('still checks a correctly signed body: malformed JSON or too deep → 400 after the signature', async () => {
    const client = nextClient();
    const malformed = '{"type": "email.delivered", "data": ';
    const bad = await send(malformed, signatureHeaders(malformed), client);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, error: 'Malformed JSON in request body' });
    const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
    const tooDeep = await send(deep, signatureHeaders(deep), client);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error).toMatch(/nested deeper than 16 levels/);
    const poisoned = '{"__proto__": {"admin": true}}';
    expect((await send(poisoned, signatureHeaders(poisoned), client)).status).toBe(400);
  });

  it('accepts a correctly signed body and parses it once', async () => {
    const body = JSON.stringify({ type: 'email.scheduled', data: { email_id: 'x@mail.test' } });
    const res = await send(body, signatureHeaders(body), nextClient());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, processed: false, eventId: null });
  });

  it(`answers 429 with Retry-After after ${BUDGET} forged signatures a minute from one IP`, async () => {
    const client = nextClient();
    const body = '{"type":"email.delivered","data":{"email_id":"x@mail.test"}}';
    for (let i = 0; i < BUDGET; i += 1) {
      expect((await send(body, forgedHeaders(body), client)).status).toBe(401);
    }
    const refused = await send(body, forgedHeaders(body), client);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/signature/i) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Missing headers count as a failed check too.
    expect((await send(body, {}, client)).status).toBe(429);

    // Another client is not affected, and the provider's valid deliveries from the same IP still pass.
    expect((await send(body, forgedHeaders(body), nextClient())).status).toBe(401);
    const valid = JSON.stringify({ type: 'email.scheduled', data: { email_id: 'y@mail.test' } });
    expect((await send(valid, signatureHeaders(valid), client)).status).toBe(200);
  });

  it('valid deliveries are not counted: a burst of them from one IP all pass', async () => {
    const client = nextClient();
    for (let i = 0; i < BUDGET * 3; i += 1) {
      const body = JSON.stringify({ type: 'email.scheduled', data: { email_id: `m${i}@mail.test` } });
      expect((await send(body, signatureHeaders(body), client)).status).toBe(200);
    }
  });
});

describe('Forged-signature budget across instances', () => {
  it('counts in the shared throttler storage: failures at two instances add up', async () => {
    process.env.WEBHOOK_SECRET = SECRET;
    // One storage for both, as Redis is when REDIS_URL is set.
    const shared = new ThrottlerStorageService();
    const overrides = [{ provide: ThrottlerStorage, useValue: shared }];
    const [a, b] = [await createTestApp({ overrides }), await createTestApp({ overrides })];
    try {
      const body = '{"type":"email.delivered"}';
      const send = (t: TestApp) =>
        t.http.request('POST', ROUTE, {
          payload: body,
          headers: {
            'content-type': 'application/json',
            'x-forwarded-for': '203.0.113.50',
            ...forgedHeaders(body),
          },
        });
      const statuses: number[] = [];
      for (let i = 0; i < BUDGET; i += 1) statuses.push((await send(i % 2 === 0 ? a : b)).status);
      expect(statuses).toEqual(Array(BUDGET).fill(401));
      expect((await send(a)).status).toBe(429);
      expect((await send(b)).status).toBe(429);
    } finally {
      await a.close();
      await b.close();
      shared.onApplicationShutdown();
      delete process.env.WEBHOOK_SECRET;
    }
  });
});
