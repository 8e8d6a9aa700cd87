import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { loggerParams } from '../src/common/logging/log-stream';
import { InvalidEnvironmentError, validateEnv } from '../src/config/env';
import { JOINLIST_RATE_LIMIT } from '../src/contacts/joinlist/joinlist.controller';
import type { Contact } from '../src/contacts/schemas/contact.schema';
import { createTestApp, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { waitFor } from './helpers/wait';

const ORIGIN = 'https://www.shop.test';
const secret = 'x'.repeat(32);

describe('TRUST_PROXY at start-up', () => {
  const production = {
    NODE_ENV: 'production',
    APP_SECRET: secret,
    BCRYPT_COST: '12',
    MONGODB_URI: 'mongodb://db.internal:27017/admin-service',
    MAIL_FROM: 'News <news@mail.example.com>',
    PUBLIC_BASE_URL: 'https://mail.example.com',
    SMTP_URL: 'smtp://mail.internal:587',
  };

  it('refuses TRUST_PROXY=true in production, naming the variable and what to give instead', () => {
    expect(() => validateEnv({ ...production, TRUST_PROXY: 'true' })).toThrow(InvalidEnvironmentError);
    expect(() => validateEnv({ ...production, TRUST_PROXY: 'true' })).toThrow(
      /TRUST_PROXY: .*X-Forwarded-For.*IPs\/CIDRs.*hop count/,
    );
  });

  it.each(['10.0.0.1', '10.0.0.0/8, 192.168.1.7', '2001:db8::/32', 'loopback, uniquelocal', '1', '2'])(
    'takes %j in production',
    (value) => {
      expect(validateEnv({ ...production, TRUST_PROXY: value }).TRUST_PROXY).toBe(value);
    },
  );

  it.each(['yes', 'not-an-ip', '10.0.0.0/33', '10.0.0.1,', '300.1.1.1', '-1', 'true,10.0.0.1'])(
    'refuses %j in any environment',
    (value) => {
      expect(() => validateEnv({ APP_SECRET: secret, TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
    },
  );

  it.each([
    ['a hop count above 3', '99'],
    ['two halves of the IPv4 internet', '0.0.0.0/1,128.0.0.0/1'],
    ['a range wider than /8', '10.0.0.0/7'],
    ['IPv4-mapped IPv6 covering every IPv4 client', '::ffff:0.0.0.0/96'],
    ['an IPv6 range wider than /32', '2001:db8::/31'],
    ['/8s that together cover more than two', '10.0.0.0/8, 11.0.0.0/8, 12.0.0.1'],
  ])('refuses %s in production, in one line naming TRUST_PROXY', (_label, value) => {
    let message = '';
    try {
      validateEnv({ ...production, TRUST_PROXY: value });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration: TRUST_PROXY: .*X-Forwarded-For.*IPs\/CIDRs.*hop count/);
    expect(message.split('\n')).toHaveLength(1);
  });

  it.each([
    '3',
    '10.0.0.0/8',
    '10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16',
    '::ffff:10.0.0.0/104',
    '2001:db8::/32',
    'uniquelocal',
  ])('takes %j in production', (value) => {
    expect(validateEnv({ ...production, TRUST_PROXY: value }).TRUST_PROXY).toBe(value);
  });

  it('still takes true outside production (development, tests)', () => {
    expect(validateEnv({ APP_SECRET: secret, TRUST_PROXY: 'true' }).TRUST_PROXY).toBe('true');
  });
});

interface LogLine {
  msg: string;
  client?: string;
}

describe('Forwarded addresses that are not IPs are ignored', () => {
  let t: TestApp;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    // TRUST_PROXY=true, as the test environment sets it: the worst case for a forged header.
    const sink = { write: (raw: string) => void lines.push(JSON.parse(raw) as LogLine) };
    t = await createTestApp({
      overrides: [{ provide: PARAMS_PROVIDER_TOKEN, useValue: loggerParams('info', 'json', sink) }],
    });
  });
  afterAll(() => t.close());

  it('does not record `not-an-ip` in the consent record nor the access log: the socket address is used', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    const res = await t.http.post(
      '/joinlist',
      { email: 'ada@example.com' },
      { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': 'not-an-ip' } },
    );
    expect(res.status).toBe(200);
    const contacts = t.app.get<Model<Contact>>(getModelToken('Contact'));
    const person = await contacts.findOne({ email: 'ada@example.com' }).lean<Contact>().orFail().exec();
    expect(person.consentHistory.map((event) => event.ip)).toEqual(['127.0.0.1']);
    // The access line follows the answer by a moment: wait for it.
    const access = () => lines.filter((line) => line.msg === 'request completed');
    await waitFor(() => access().length > 0, { intervalMs: 10, describe: () => 'no access line' });
    expect(access().map((line) => line.client)).not.toContain('not-an-ip');
    expect(access().at(-1)?.client).toBe('127.0.0.1');
  });

  it('skips an invalid entry and keeps the nearest valid one before it', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    await t.http.post(
      '/joinlist',
      { email: 'grace@example.com' },
      {
        headers: {
          'x-app-key': app.publicKey,
          origin: ORIGIN,
          'x-forwarded-for': '<script>, 203.0.113.9',
        },
      },
    );
    const contacts = t.app.get<Model<Contact>>(getModelToken('Contact'));
    const person = await contacts.findOne({ email: 'grace@example.com' }).lean<Contact>().orFail().exec();
    expect(person.consentHistory.map((event) => event.ip)).toEqual(['203.0.113.9']);
  });

  it('does not let invalid forwarded values buy fresh rate-limit budgets', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    const statuses: number[] = [];
    for (let i = 0; i < JOINLIST_RATE_LIMIT + 4; i += 1) {
      const res = await t.http.post(
        '/joinlist',
        { email: `reader${i}@example.com` },
        { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': `forged-${i}` } },
      );
      statuses.push(res.status);
    }
    // The first test's request came from the same socket address: at least the last four are refused.
    expect(statuses.slice(-4)).toEqual([429, 429, 429, 429]);
  });
});

describe('TRUST_PROXY as the load balancer’s addresses', () => {
  let t: TestApp;
  const previous = process.env.TRUST_PROXY;

  beforeAll(async () => {
    // The in-process requests come from 127.0.0.1: that is the load balancer here.
    process.env.TRUST_PROXY = '127.0.0.1';
    t = await createTestApp();
  });
  afterAll(async () => {
    process.env.TRUST_PROXY = previous;
    await t.close();
  });

  it('counts a client by the address the balancer saw, whatever it prepends to X-Forwarded-For', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    const statuses: number[] = [];
    for (let i = 0; i < 14; i += 1) {
      // The client sends `10.0.0.i`; the balancer appends the address it accepted the connection from.
      const res = await t.http.post(
        '/joinlist',
        { email: `reader${i}@example.com` },
        {
          headers: {
            'x-app-key': app.publicKey,
            origin: ORIGIN,
            'x-forwarded-for': `10.0.0.${i}, 198.51.100.20`,
          },
        },
      );
      statuses.push(res.status);
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(14 - JOINLIST_RATE_LIMIT);
  });
});
