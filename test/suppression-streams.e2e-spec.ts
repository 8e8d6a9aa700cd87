import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { UNDELIVERABLE_ADDRESS } from '../src/email/suppression/undeliverable-address';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApiKey, seedApp } from './helpers/factories';
import { useMailApp } from './helpers/mail-app';
import { createSession } from './helpers/session';

/**
 * Suppression by cause and stream (docs/operations/email-delivery.md "Suppression"): a complaint, an opt-out
 * and repeated soft bounces stop broadcast mail only; a hard bounce stops all mail; routes that mail on a
 * person's request say when nothing will be sent.
 */
describe('Suppression per stream and cause', () => {
  const mailApp = useMailApp({ env: { MAIL_FROM: 'Admin Service <no-reply@mail.example.com>' } });
  let email: EmailService;
  let suppression: SuppressionService;
  let jobs: Model<EmailJob>;
  beforeAll(() => {
    email = mailApp.t.app.get(EmailService);
    suppression = mailApp.t.app.get(SuppressionService);
    jobs = mailApp.t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  });

  const drain = () => drainEmailQueue(mailApp.t);
  const mailsTo = (to: string) => mailApp.smtp.received.filter((mail) => mail.to.includes(to));
  const resultOf = async (id: string) => (await jobs.findById(id).lean<EmailJob>().orFail().exec()).result;

  /** One broadcast (campaign) and one transactional message to the address; their jobs' results. */
  async function sendBoth(to: string) {
    const broadcast = await email.enqueueEmail({
      to,
      appId: 'shop',
      campaignId: '65a000000000000000000001',
      subject: 'News',
      text: 'Our news',
    });
    const transactional = await email.enqueueEmail({ to, appId: 'shop', subject: 'Sign in', text: 'Link' });
    await drain();
    return { broadcast: await resultOf(broadcast.id), transactional: await resultOf(transactional.id) };
  }

  it('a complaint, an opt-out and soft bounces stop broadcasts only; a hard bounce stops everything', async () => {
    const cases = [
      ['complaint', false],
      ['opt_out', false],
      ['soft_bounce', false],
      ['hard_bounce', true],
    ] as const;
    for (const [reason, stopsTransactional] of cases) {
      const to = `${reason}@example.com`;
      await suppression.suppress({ email: to, reason, source: 'test', appId: 'other-app' });
      const results = await sendBoth(to);
      expect(results.broadcast).toEqual({ skipped: 'suppressed', reason, stream: 'broadcast' });
      if (stopsTransactional) {
        expect(results.transactional).toEqual({ skipped: 'suppressed', reason, stream: 'transactional' });
        expect(mailsTo(to)).toHaveLength(0);
      } else {
        expect(results.transactional).toMatchObject({ accepted: [to] });
        expect(mailsTo(to).map((mail) => mail.headers.subject)).toEqual(['Sign in']);
      }
    }
  });

  it('keeps causes apart: lifting an opt-out by consent leaves a complaint', async () => {
    const to = 'both@example.com';
    await suppression.suppress({ email: to, reason: 'opt_out', source: 'contacts.opt-out' });
    await suppression.suppress({ email: to, reason: 'complaint', source: 'webhook:primary' });
    expect(await suppression.liftOptOut(to)).toBe(true);
    expect(await suppression.find(to)).toMatchObject({ reason: 'complaint', source: 'webhook:primary' });
    expect(Object.keys((await suppression.find(to))!.causes)).toEqual(['complaint']);
  });

  it('reads an entry stored before causes were kept apart as its one reason (no migration run)', async () => {
    const db = mailApp.t.connection.db!;
    const legacy = (address: string, reason: string) => ({
      addressHash: suppression.addressHash(address),
      reason,
      source: 'webhook:primary',
      appId: 'shop',
      createdAt: new Date('2026-01-01'),
      updatedAt: new Date('2026-01-01'),
    });
    await db
      .collection('email_suppressions')
      .insertMany([
        legacy('old-complaint@example.com', 'complaint'),
        legacy('old-bounce@example.com', 'hard_bounce'),
        legacy('old-optout@example.com', 'opt_out'),
      ]);
    const complaint = await sendBoth('old-complaint@example.com');
    expect(complaint.broadcast).toMatchObject({ skipped: 'suppressed', reason: 'complaint' });
    expect(complaint.transactional).toMatchObject({ accepted: ['old-complaint@example.com'] });
    const bounce = await sendBoth('old-bounce@example.com');
    expect(bounce.transactional).toMatchObject({ skipped: 'suppressed', reason: 'hard_bounce' });

    // A later cause is added beside the old one; lifting the old one by consent leaves the new one.
    await suppression.suppress({ email: 'old-optout@example.com', reason: 'soft_bounce', source: 'test' });
    expect(await suppression.find('old-optout@example.com')).toMatchObject({ reason: 'opt_out' });
    expect(await suppression.liftOptOut('old-optout@example.com')).toBe(true);
    expect(await suppression.isSuppressed('old-optout@example.com')).toBe(false);
  });

  describe('answers of routes that mail on request', () => {
    let appId: string;
    let apiKey: string;
    beforeEach(async () => {
      await createSession(mailApp.t);
      appId = (await seedApp(mailApp.t, { name: 'Shop' })).id;
      apiKey = (await seedApiKey(mailApp.t, appId)).value;
    });

    const askLink = async (to: string) => {
      const res = await mailApp.t.http.post('/auth/magic-link', { email: to, appId });
      await mailApp.t.app.get(MagicLinkService).idle();
      return res;
    };

    it('a sign-in link to a hard-bounced address: 422 saying so, nothing queued', async () => {
      await suppression.suppress({ email: 'gone@example.com', reason: 'hard_bounce', source: 'test' });
      const res = await askLink('gone@example.com');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ success: false, error: UNDELIVERABLE_ADDRESS });
      expect(await jobs.countDocuments().exec()).toBe(0);
    });

    it('a sign-in link to an address that complained about a newsletter is sent', async () => {
      await suppression.suppress({ email: 'angry@example.com', reason: 'complaint', source: 'test' });
      expect((await askLink('angry@example.com')).status).toBe(200);
      await drain();
      expect(mailsTo('angry@example.com')).toHaveLength(1);
    });

    it('a subscribe request for a hard-bounced address: 422, no subscription, no mail', async () => {
      await suppression.suppress({ email: 'gone@example.com', reason: 'hard_bounce', source: 'test' });
      const res = await mailApp.t.http.post(
        `/${appId}/newsletter/subscribe`,
        { email: 'gone@example.com' },
        { headers: { 'x-api-key': apiKey } },
      );
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ success: false, error: UNDELIVERABLE_ADDRESS });
      expect(await mailApp.t.connection.db!.collection('contacts').countDocuments()).toBe(0);
    });
  });
});
