import { Logger } from '@nestjs/common';
import { Types } from 'mongoose';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { loggerParams } from '../src/common/logging/log-stream';
import { ProviderEffects } from '../src/email/events/provider-effects';
import { createTestApp, type TestApp } from './helpers/app';
import { waitForNotifications } from './helpers/chat';
import { seedApp } from './helpers/factories';

const ORIGIN = 'https://www.shop.test';
/** Names and addresses unlikely to appear in a log line by chance. */
const PERSON = { email: 'augusta.king@lovelace.example', firstName: 'Augusta' };
const BOUNCED = 'bounced.reader@mailbox.example';
const COMPLAINED = 'spam.clicker@mailbox.example';
const PERSONAL = /augusta|lovelace\.example|bounced\.reader|spam\.clicker|mailbox\.example/i;

/**
 * Log lines carry ids, never the people they are about: the chat fallback (no webhook configured) used to
 * write each notification's text, with the signup's address and first name, and the address of a bounce or
 * a complaint. A GDPR erasure cannot reach a log file, so nothing personal may be written there.
 */
describe('No personal data in log lines', () => {
  let t: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    delete process.env.CHAT_DEFAULT_WEBHOOK_URL;
    // Every level an operator might switch on, into memory.
    const sink = { write: (raw: string) => void lines.push(raw) };
    t = await createTestApp({
      overrides: [{ provide: PARAMS_PROVIDER_TOKEN, useValue: loggerParams('debug', 'json', sink) }],
    });
  });
  afterAll(() => t.close());

  it('a joinlist signup, a hard bounce and a complaint delivered to the log name ids only', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    const res = await t.http.post(
      '/joinlist',
      { ...PERSON, referralUrl: 'https://www.shop.test/augusta-landing' },
      { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': '198.51.100.77' } },
    );
    expect(res.status).toBe(200);
    const effects = t.app.get(ProviderEffects);
    for (const [type, to] of [
      ['bounced', BOUNCED],
      ['complained', COMPLAINED],
    ] as const) {
      await effects.apply({
        type,
        bounceType: type === 'bounced' ? 'hard' : undefined,
        message: {
          jobId: String(new Types.ObjectId()),
          messageId: `${String(new Types.ObjectId())}@mail.example.com`,
          appId: app.id,
          campaignId: String(new Types.ObjectId()),
          contactId: null,
          stream: 'broadcast',
          to,
        },
        messageId: `${String(new Types.ObjectId())}@mail.example.com`,
        to,
        occurredAt: new Date(),
      });
    }
    await waitForNotifications(t, 3);
    lines.splice(0);

    const summary = await t.app.get(ChatDeliveryWorker).processDue();
    expect(summary.delivered).toBe(3);
    const fallback = lines.filter((line) => line.includes('no webhook configured'));
    expect(fallback).toHaveLength(3);
    // Each names the notification, its app and event, so an operator can look it up.
    for (const line of fallback) expect(line).toMatch(new RegExp(`[a-f\\d]{24} of app ${app.id}: `));
    expect(lines.filter((line) => PERSONAL.test(JSON.parse(line).msg ?? ''))).toEqual([]);
    expect(lines.join('\n')).not.toMatch(PERSONAL);
  });

  it('the joinlist honeypot line names the app, not the client address', async () => {
    const app = await seedApp(t, { allowedOrigins: [ORIGIN] });
    lines.splice(0);
    await t.http.post(
      '/joinlist',
      { email: PERSON.email, website: 'https://spam.example' },
      { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': '198.51.100.78' } },
    );
    const honeypot = lines.filter((line) => line.includes('honeypot'));
    expect(honeypot).toHaveLength(1);
    expect(honeypot[0]).not.toMatch(/198\.51\.100\.78/);
    expect(honeypot[0]).not.toMatch(PERSONAL);
  });

  it('takes addresses out of text we do not write ourselves (an SMTP reply, an error and its stack)', () => {
    lines.splice(0);
    const logger = new Logger('Probe');
    logger.warn(
      'E-mail job 1 is dead: 550 5.1.1 <bounced.reader@mailbox.example>: Recipient address rejected',
    );
    const error = new Error('E11000 duplicate key { email: "augusta.king@lovelace.example" }');
    logger.error({ err: error }, 'Could not store');
    logger.error(error.message, error.stack);
    logger.log('Message 6b06e0b9f6c184af3d9db754@mail.example.com handed over');
    const written = lines.join('\n');
    expect(written).not.toMatch(PERSONAL);
    expect(written.match(/\[address\]/g)?.length).toBeGreaterThanOrEqual(3);
    // Our own Message-IDs name a job, not a person: kept.
    expect(written).toContain('6b06e0b9f6c184af3d9db754@mail.example.com');
  });
});
