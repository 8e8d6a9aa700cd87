import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { EMAIL_ADDRESS_PATTERN } from '../src/common/validation/email-address';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EmailJobStore } from '../src/email/jobs/email-job.store';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApiKey, seedApp, subscriberDocument } from './helpers/factories';
import type { HttpClient, RequestOptions, TestResponse } from './helpers/http';
import { createSessions, Session, TEST_PASSWORD } from './helpers/session';
import { TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const ORIGIN = 'https://www.shop.test';
/** Quick retries: a plan that fails (as every one with such an address did) dies within the drain. */
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 4,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 10, maxMs: 50 },
};

/** Addresses the queue cannot send to: every entry point refuses them at the door. */
const REFUSED: Record<string, string> = {
  'a quoted local part with a space': '"a b"@example.com',
  'a quoted local part with CRLF': '"a\r\nb"@example.com',
  'a control character': 'a\u0001b@example.com',
  'a 255-character address': `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.test`,
  'two dots in a row': 'a..b@x.test',
};

describe('One e-mail address rule', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;
  let app: App;
  let page: HttpClient;
  let key: HttpClient;
  let contacts: Model<Contact>;
  let client = 0;

  const mailApp = useMailApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }] });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
  });
  beforeEach(async () => {
    ({ admin } = await createSessions(t));
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
    page = t.http.with({ 'x-app-key': app.publicKey, origin: ORIGIN });
    key = t.http.with({ 'x-api-key': (await seedApiKey(t, app.id)).value });
  });

  it('has a 255-character address in the corpus', () => {
    expect(REFUSED['a 255-character address']).toHaveLength(255);
  });

  /** Document counts of every collection: a refused request changes none of them. */
  async function counts(): Promise<Record<string, number>> {
    const collections = await t.connection.db!.collections();
    const entries = await Promise.all(
      collections.map(async (c) => [c.collectionName, await c.countDocuments()] as const),
    );
    return Object.fromEntries(entries.filter(([, count]) => count > 0));
  }

  /** Each entry point with a body whose only fault is `address` in the named field. */
  type Send = (address: string, options: RequestOptions) => Promise<TestResponse>;
  const entryPoints: Record<string, { field: string; send: Send }> = {
    'POST /joinlist': { field: 'email', send: (email, o) => page.post('/joinlist', { email }, o) },
    'POST /{appId}/newsletter/subscribe': {
      field: 'email',
      send: (email, o) => key.post(`/${app.id}/newsletter/subscribe`, { email }, o),
    },
    'POST /admin/{appId}/newsletter/subscribers': {
      field: 'email',
      send: (email, o) => admin.http.post(`/admin/${app.id}/newsletter/subscribers`, { email }, o),
    },
    'POST /auth/magic-link': {
      field: 'email',
      send: (email, o) => t.http.post('/auth/magic-link', { email, appId: app.id }, o),
    },
    'POST /auth/login': {
      field: 'email',
      send: (email, o) => t.http.post('/auth/login', { email, password: TEST_PASSWORD }, o),
    },
    'POST /users': {
      field: 'email',
      send: (email, o) =>
        admin.http.post('/users', { email, password: TEST_PASSWORD, firstName: 'A', lastName: 'B' }, o),
    },
    'POST /{appId}/feedback': {
      field: 'email',
      send: (email, o) =>
        t.http.post(`/${app.id}/feedback`, { type: 'bug', subject: 'S', message: 'M', email }, o),
    },
    'POST /{appId}/wants': {
      field: 'authorEmail',
      send: (email, o) =>
        key.post(`/${app.id}/wants`, { title: 'T', description: 'D', category: 'ui', authorEmail: email }, o),
    },
    'POST /{appId}/tickets': {
      field: 'email',
      send: (email, o) => admin.http.post(`/${app.id}/tickets`, { email, subject: 'S', message: 'M' }, o),
    },
    'POST /admin/templates (sender)': {
      field: 'sender.email',
      send: (email, o) =>
        admin.http.post(
          '/admin/templates',
          {
            name: 'welcome',
            subject: 'Hi',
            htmlTemplate: '<p>Hi</p>',
            textTemplate: 'Hi',
            sender: { email },
          },
          o,
        ),
    },
  };

  describe.each(Object.entries(entryPoints))('%s', (_name, { field, send }) => {
    it.each(Object.entries(REFUSED))(
      'refuses %s with 400 naming the field, storing nothing',
      async (_kind, address) => {
        const before = await counts();
        client += 1;
        // A client address per request, so the per-IP limits of the public routes stay out of the way.
        const res = await send(address, {
          headers: { 'x-forwarded-for': `10.24.${client >> 8}.${client % 256}` },
        });
        await t.app.get(MagicLinkService).idle();
        expect(res.status).toBe(400);
        expect(res.body.success).toBe(false);
        expect(res.body.error).toEqual(expect.stringContaining(field));
        expect(await counts()).toEqual(before);
        expect(await contacts.countDocuments({ email: address.toLowerCase() })).toBe(0);
      },
    );
  });

  it('refuses the addresses per entry of an import, storing none of them', async () => {
    const before = await counts();
    const res = await admin.http.post(`/admin/${app.id}/newsletter/subscribers/import`, {
      subscribers: Object.values(REFUSED).map((email) => ({ email })),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ imported: 0, skipped: Object.keys(REFUSED).length });
    for (const skipped of res.body.data.skippedDetails) {
      expect(skipped).toMatchObject({ reason: 'invalid', error: expect.stringContaining('email') });
    }
    expect(await counts()).toEqual(before);
  });

  it('refuses them as the address of a campaign test and a ticket message', async () => {
    const campaign = await admin.http.post(`/admin/${app.id}/newsletter/campaigns`, {
      name: 'N',
      subject: 'S',
      htmlContent: '<p>Hi</p>',
    });
    const ticket = await admin.http.post(`/${app.id}/tickets`, {
      email: 'ada@example.com',
      subject: 'S',
      message: 'M',
    });
    expect([campaign.status, ticket.status]).toEqual([201, 201]);
    const before = await counts();
    for (const address of Object.values(REFUSED)) {
      const test = await admin.http.post(
        `/admin/${app.id}/newsletter/campaigns/${campaign.body.data._id}/test`,
        { email: address },
      );
      expect([test.status, test.body.error]).toEqual([400, expect.stringContaining('email')]);
      const message = await admin.http.post(`/${app.id}/tickets/${ticket.body.data._id}/messages`, {
        content: 'C',
        authorEmail: address,
      });
      expect([message.status, message.body.error]).toEqual([400, expect.stringContaining('authorEmail')]);
    }
    expect(await counts()).toEqual(before);
  });

  it('documents the rule on every address field of the OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body as {
      components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
    };
    const fields = Object.entries(doc.components.schemas).flatMap(([name, schema]) =>
      Object.entries(schema.properties ?? {})
        .filter(([, property]) => property.pattern === EMAIL_ADDRESS_PATTERN.source)
        .map(([field, property]) => ({ field: `${name}.${field}`, property })),
    );
    expect(fields.map(({ field }) => field)).toEqual(
      expect.arrayContaining([
        'JoinlistDto.email',
        'SubscribeDto.email',
        'CreateSubscriberDto.email',
        'RequestMagicLinkDto.email',
        'CreateUserDto.email',
        'LoginDto.email',
        'CreateTicketBody.email',
        'CreateTicketMessageDto.authorEmail',
        'CreateFeedbackDto.email',
        'CreateWantDto.authorEmail',
        'TemplateSenderDto.email',
        'TestCampaignDto.email',
      ]),
    );
    for (const { property } of fields) {
      expect(property).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
    }
  });

  it('still accepts ordinary addresses: plus tags, subdomains, digits, upper case', async () => {
    for (const email of ['Ada.Lovelace+news@mail.example.co.uk', '007@x-1.example.io']) {
      const res = await page.post('/joinlist', { email });
      expect(res.status).toBe(200);
      expect(await contacts.countDocuments({ email: email.toLowerCase() })).toBe(1);
    }
  });

  describe('stored before the rule', () => {
    const jobs = () => t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    const drain = async () => {
      await drainEmailQueue(t);
      await t.app.get(CampaignProgress).flush();
    };

    it('a campaign skips and records an unsendable address and goes to everyone else', async () => {
      const now = new Date();
      const person = (email: string) => subscriberDocument(app.id, email, null, now);
      const bad = person('"a b"@example.com');
      await contacts.collection.insertMany([
        person('first@example.com'),
        bad,
        person('a..b@x.test'),
        person('last@example.com'),
      ]);
      const created = await admin.http.post(`/admin/${app.id}/newsletter/campaigns`, {
        name: 'N',
        subject: 'S',
        htmlContent: '<p>Hi</p>',
      });
      const id = created.body.data._id as string;
      expect((await admin.http.post(`/admin/${app.id}/newsletter/campaigns/${id}/send`)).status).toBe(200);
      await drain();

      expect(smtp.received.flatMap((mail) => mail.to).sort()).toEqual([
        'first@example.com',
        'last@example.com',
      ]);
      const campaign = (await admin.http.get(`/admin/${app.id}/newsletter/campaigns/${id}`)).body.data;
      expect(campaign).toMatchObject({ status: 'sent', stats: { total: 4, sent: 2, failed: 2 } });
      const plan = await jobs().findOne({ campaignId: id, type: 'email.batch.plan' }).lean().orFail();
      expect(plan).toMatchObject({ status: 'completed', attempts: 1 });
      // The skip is a job of its own, finished without a send, visible in the job list.
      const listed = await admin.http.get('/admin/email-jobs', {
        query: { campaignId: id, type: 'email.send', status: 'completed' },
      });
      const skipped = (listed.body.data as { result?: Record<string, unknown> }[]).filter(
        (job) => job.result?.skipped === 'invalid_address',
      );
      expect(skipped).toHaveLength(2);
      const skip = await jobs()
        .findOne({ campaignId: id, 'payload.contactId': String(bad._id) })
        .lean()
        .orFail();
      expect(skip).toMatchObject({
        status: 'completed',
        attempts: 0,
        result: { skipped: 'invalid_address' },
      });
      expect(skip.messageId).toBeUndefined();
    });

    it('an inline recipients plan skips and records the address, and mails the others', async () => {
      await t.app.get(EmailJobStore).insert([
        {
          type: 'email.batch.plan',
          payload: {
            kind: 'recipients',
            message: { subject: 'Hello', text: 'Hi' },
            recipients: [{ to: 'ok@example.com' }, { to: '"a b"@example.com' }],
          },
          idempotencyKey: 'stored-plan',
          priority: 0,
          scheduledAt: new Date(),
          maxAttempts: 5,
          appId: null,
          campaignId: null,
        },
      ]);
      await drain();
      expect(smtp.received.flatMap((mail) => mail.to)).toEqual(['ok@example.com']);
      expect(await jobs().findOne({ type: 'email.batch.plan' }).lean()).toMatchObject({
        status: 'completed',
        attempts: 1,
      });
      expect(await jobs().findOne({ 'payload.to': '"a b"@example.com' }).lean()).toMatchObject({
        status: 'completed',
        result: { skipped: 'invalid_address' },
      });
    });
  });
});
