import { createServer, type AddressInfo } from 'node:net';
import { createTransport } from 'nodemailer';
import { EmailService } from '../src/email/email.service';
import { BounceListener } from '../src/email/bounces/bounce-listener';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue } from './helpers/email-queue';
import { useMailApp } from './helpers/mail-app';

const MAX_BYTES = 20_000;

/** A free loopback port for the listener (BOUNCE_SMTP_PORT names a fixed one). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An RFC 3464 delivery status notification for `recipient`, as a relay writes one. */
const dsn = (recipient: string, status = '5.1.1', action = 'failed') =>
  [
    'From: Mail Delivery System <MAILER-DAEMON@relay.example.net>',
    'To: bounces@bounces.example.com',
    'Subject: Undelivered Mail Returned to Sender',
    'Message-ID: <dsn-1@relay.example.net>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host relay.example.net. Your message could not be delivered.',
    '',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; relay.example.net',
    'Arrival-Date: Sat, 28 Nov 2026 10:00:00 +0000',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Original-Recipient: rfc822;${recipient}`,
    `Action: ${action}`,
    `Status: ${status}`,
    'Remote-MTA: dns; mx.example.com',
    `Diagnostic-Code: smtp; 550 ${status} <${recipient}>: Recipient address rejected: User unknown`,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    'From: Shop <news@mail.example.com>',
    `To: ${recipient}`,
    'Subject: Hello',
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');

/** An RFC 5965 complaint (ARF) about a message to `recipient`. */
const arf = (recipient: string, feedbackType = 'abuse') =>
  [
    'From: Feedback Loop <fbl@isp.example.org>',
    'To: bounces@bounces.example.com',
    'Subject: FW: Hello',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an e-mail abuse report for an e-mail message received from IP 192.0.2.1.',
    '',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${feedbackType}`,
    'User-Agent: SomeGenerator/1.0',
    'Version: 1',
    `Original-Rcpt-To: <${recipient}>`,
    'Arrival-Date: Sat, 28 Nov 2026 10:00:00 +0000',
    'Source-IP: 192.0.2.1',
    '',
    '--ARF',
    'Content-Type: message/rfc822',
    '',
    'From: Shop <news@mail.example.com>',
    `To: ${recipient}`,
    'Subject: Hello',
    '',
    'Our news',
    '--ARF--',
    '',
  ].join('\r\n');

/**
 * The inbound bounce listener (docs/operations/email-delivery.md "Bounces"): VERP envelope senders on
 * BOUNCE_DOMAIN; DSNs and ARF reports mailed to them (with nodemailer, over real SMTP) become the same events
 * as a provider's webhooks, once each; anything else is refused or dropped, and the listener keeps going.
 */
describe('Inbound bounce listener', () => {
  let port: number;
  // Before the app starts (useMailApp's hooks run in order after this one): its port is in the env.
  beforeAll(async () => {
    port = await freePort();
  });
  const mailApp = useMailApp({
    env: {
      MAIL_FROM: 'Shop <news@mail.example.com>',
      BOUNCE_DOMAIN: 'bounces.example.com',
      get BOUNCE_SMTP_PORT() {
        return String(port);
      },
      BOUNCE_MAX_MESSAGE_BYTES: String(MAX_BYTES),
    },
  });
  const db = () => mailApp.t.connection.db!;
  const suppression = () => mailApp.t.app.get(SuppressionService);
  const events = (type: string) => db().collection('email_events').find({ type }).toArray();

  /** Sends one message to `to` and returns the envelope sender it left with. */
  async function sent(to: string): Promise<string> {
    await mailApp.t.app.get(EmailService).enqueueEmail({ to, subject: 'Hello', text: 'Our news' });
    await drainEmailQueue(mailApp.t);
    const mail = mailApp.smtp.received.find((each) => each.to.includes(to));
    return mail!.from;
  }

  /** Mails a report to the listener as a relay would (null sender); resolves with the SMTP answer. */
  async function report(to: string, raw: string | Buffer) {
    const transport = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    try {
      return await transport.sendMail({ envelope: { from: '', to }, raw });
    } finally {
      transport.close();
    }
  }

  it('sends each message with a signed VERP envelope sender on BOUNCE_DOMAIN', async () => {
    expect(mailApp.t.app.get(BounceListener).port()).toBe(port);
    const first = await sent('ada@example.com');
    const second = await sent('bob@example.com');
    expect(first).toMatch(/^b\+[0-9a-f]{24}\.[0-9a-f]{20}@bounces\.example\.com$/);
    expect(second).not.toBe(first);
  });

  it('a DSN for a failed recipient is a hard bounce: suppressed, one event however often it comes', async () => {
    const verp = await sent('gone@example.com');
    const answer = await report(verp, dsn('gone@example.com'));
    expect(answer.response).toMatch(/^250/);
    expect(await suppression().find('gone@example.com')).toMatchObject({ reason: 'hard_bounce' });
    await report(verp, dsn('gone@example.com'));
    const bounces = await events('bounced');
    expect(bounces).toHaveLength(1);
    expect(bounces[0]).toMatchObject({ bounceType: 'hard', provider: 'primary' });
  });

  it('a DSN with a 4.x.x status is a soft bounce; a delay report is no bounce', async () => {
    const verp = await sent('full@example.com');
    await report(verp, dsn('full@example.com', '4.2.2', 'delayed'));
    expect(await events('bounced')).toHaveLength(0);
    await report(verp, dsn('full@example.com', '4.2.2'));
    expect(await events('bounced')).toEqual([expect.objectContaining({ bounceType: 'soft' })]);
    expect(await suppression().isSuppressed('full@example.com')).toBe(false);
  });

  it('an ARF abuse report is a complaint: broadcasts stop, once', async () => {
    const verp = await sent('angry@example.com');
    await report(verp, arf('angry@example.com'));
    await report(verp, arf('angry@example.com'));
    expect(await suppression().find('angry@example.com')).toMatchObject({ reason: 'complaint' });
    expect(await events('complained')).toHaveLength(1);
    // `not-spam` is the opposite of a complaint.
    const other = await sent('fine@example.com');
    await report(other, arf('fine@example.com', 'not-spam'));
    expect(await suppression().isSuppressed('fine@example.com')).toBe(false);
  });

  it('refuses recipients that are not its own VERP addresses, and tampered signatures', async () => {
    const verp = await sent('ada@example.com');
    await expect(report('bounces@bounces.example.com', dsn('ada@example.com'))).rejects.toMatchObject({
      responseCode: 550,
    });
    const tampered = verp.replace(/\.([0-9a-f])/, (_all, digit: string) => `.${digit === '0' ? '1' : '0'}`);
    await expect(report(tampered, dsn('ada@example.com'))).rejects.toMatchObject({ responseCode: 550 });
    expect(await suppression().isSuppressed('ada@example.com')).toBe(false);
  });

  it('survives garbage and refuses an oversized message, then still takes a report', async () => {
    const verp = await sent('gone@example.com');
    const garbage = Buffer.from(Array.from({ length: 5_000 }, (_, i) => (i * 7919) % 256));
    expect((await report(verp, garbage)).response).toMatch(/^250/);
    expect((await report(verp, 'Subject: hi\r\n\r\nno report here\r\n')).response).toMatch(/^250/);
    await expect(report(verp, dsn('gone@example.com') + 'x'.repeat(MAX_BYTES))).rejects.toMatchObject({
      responseCode: 552,
    });
    expect(await events('bounced')).toHaveLength(0);
    await report(verp, dsn('gone@example.com'));
    expect(await events('bounced')).toHaveLength(1);
  });
});
