import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { CampaignHolds } from '../src/email/jobs/campaign-holds';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import {
  type FaultAction,
  MongoFaultProxy,
  NOT_WRITABLE_PRIMARY,
  type SeenCommand,
  withWriteConcernError,
} from './helpers/mongo-fault-proxy';
import { createSession, type Session } from './helpers/session';
import { Role } from '../src/common/auth/roles';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 20,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 50, maxMs: 500 },
};

/** Two planner batches (PLAN_BATCH_SIZE is 500): the fault hits the second, after a checkpoint. */
const RECIPIENTS = 1_000;

/** The campaign's `email.send` inserts into the queue, and its message-ledger inserts. */
const isCampaignSendInsert = (command: SeenCommand) =>
  command.name === 'insert' &&
  command.collection === 'email_jobs' &&
  command.documents.some((doc) => doc.type === 'email.send' && doc.campaignId);
const isLedgerInsert = (command: SeenCommand) =>
  command.name === 'insert' && command.collection === 'email_messages' && command.documents.length > 0;

interface Row {
  fault: string;
  recipients: number;
  jobsStored: number;
  skipped: number;
  duplicates: number;
  /** Recipients who received exactly one message (null: the campaign was not sent). */
  sentOnce: number | null;
  planAttempts: number;
}

/**
 * A campaign whose bulk insert is failed the ways a replica-set election fails it (docs/operations/
 * running-on-mongodb.md, "Bulk writes and elections"), through a wire-protocol proxy between the service
 * and the dev database: every recipient still ends with exactly one job and one message.
 */
describe('Bulk writes under election faults', () => {
  jest.setTimeout(180_000);
  const databaseUri = process.env.MONGODB_URI!;
  const rows: Row[] = [];
  let smtp: TestSmtpServer;
  let proxy: MongoFaultProxy;
  let t: TestApp;
  let admin: Session;
  let fault: { matches: (command: SeenCommand) => boolean; nth: number; action: FaultAction } | null = null;
  let seen = 0;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    process.env.SMTP_URL = smtp.url;
    proxy = await MongoFaultProxy.start(databaseUri, {
      onCommand: (command) => {
        if (!fault?.matches(command)) return undefined;
        seen += 1;
        if (seen !== fault.nth) return undefined;
        return fault.action;
      },
    });
    process.env.MONGODB_URI = proxy.uriFor(databaseUri);
    t = await createTestApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }] });
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
    await smtp.close();
    process.env.MONGODB_URI = databaseUri;
    if (process.env.PRINT_FAULT_TABLE) console.table(rows);
  });
  beforeEach(async () => {
    fault = null;
    seen = 0;
    await resetDatabase(t.connection);
    smtp.received.length = 0;
    admin = await createSession(t, Role.Admin);
  });

  async function runCampaign(name: string, armed: NonNullable<typeof fault>, send = false): Promise<Row> {
    const appId = (await seedApp(t)).id;
    const contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    const people = Array.from({ length: RECIPIENTS }, (_, i) =>
      subscriberDocument(appId, `reader${i}@example.com`, `R${i}`),
    );
    await contacts.collection.insertMany(people);
    const base = `/admin/${appId}/newsletter/campaigns`;
    const created = await admin.http.post(base, { name, subject: 'News', htmlContent: '<p>Hi</p>' });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;

    fault = armed;
    expect((await admin.http.post(`${base}/${id}/send`)).status).toBe(200);
    // Held, the campaign's messages wait while its plan runs (and fails, and runs again).
    await t.app.get(CampaignHolds).hold(id, 'counted before sending');
    await drainEmailQueue(t, { deadlineMs: 120_000, dueOnly: true });
    if (send) {
      await t.app.get(CampaignHolds).release(id);
      await drainEmailQueue(t, { deadlineMs: 120_000 });
    }
    await t.app.get(CampaignProgress).flush();
    expect(seen).toBeGreaterThanOrEqual(armed.nth);

    const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    const sends = await jobs.find({ campaignId: id, type: 'email.send' }).lean<EmailJob[]>().exec();
    const plan = await jobs.findOne({ campaignId: id, type: 'email.batch.plan' }).lean<EmailJob>().exec();
    const perPerson = new Map<string, number>();
    for (const job of sends) {
      const contactId = String((job.payload as { contactId?: unknown }).contactId);
      perPerson.set(contactId, (perPerson.get(contactId) ?? 0) + 1);
    }
    const mailsTo = new Map<string, number>();
    for (const mail of smtp.received) for (const to of mail.to) mailsTo.set(to, (mailsTo.get(to) ?? 0) + 1);
    const row: Row = {
      fault: name,
      recipients: RECIPIENTS,
      jobsStored: sends.length,
      skipped: people.filter((person) => !perPerson.has(String(person._id))).length,
      duplicates: [...perPerson.values()].reduce((sum, count) => sum + count - 1, 0),
      sentOnce: send ? people.filter((person) => mailsTo.get(person.email) === 1).length : null,
      planAttempts: plan?.attempts ?? 0,
    };
    rows.push(row);
    if (send) {
      const campaign = (await admin.http.get(`${base}/${id}`)).body.data;
      expect(campaign).toMatchObject({
        status: 'sent',
        stats: { total: RECIPIENTS, sent: RECIPIENTS, failed: 0 },
      });
    }
    return row;
  }

  it('sends each recipient once when the second batch meets NotWritablePrimary', async () => {
    const action: FaultAction = { kind: 'answer', reply: NOT_WRITABLE_PRIMARY };
    const row = await runCampaign(
      'NotWritablePrimary, then sent',
      { matches: isCampaignSendInsert, nth: 2, action },
      true,
    );
    expect(row).toMatchObject({ jobsStored: RECIPIENTS, skipped: 0, duplicates: 0, sentOnce: RECIPIENTS });
    // The failed batch failed the plan loudly: it ran again and resumed after its checkpoint.
    expect(row.planAttempts).toBe(2);
  });

  it.each<[string, FaultAction]>([
    ['connection closed before the insert (nothing written)', { kind: 'cut-before' }],
    ['connection closed after the insert (written, unacknowledged)', { kind: 'cut-after' }],
    [
      'write-concern failure (written, not majority-acknowledged)',
      { kind: 'rewrite', reply: withWriteConcernError },
    ],
  ])('queues each recipient exactly once after a %s', async (name, action) => {
    const row = await runCampaign(name, { matches: isCampaignSendInsert, nth: 2, action });
    expect(row).toMatchObject({ jobsStored: RECIPIENTS, skipped: 0, duplicates: 0 });
    expect(row.planAttempts).toBe(2);
  });

  it('fails the batch when the ledger’s insert is lost, and queues each recipient once', async () => {
    const row = await runCampaign('NotWritablePrimary on the ledger insert', {
      matches: isLedgerInsert,
      nth: 2,
      action: { kind: 'answer', reply: NOT_WRITABLE_PRIMARY },
    });
    expect(row).toMatchObject({ jobsStored: RECIPIENTS, skipped: 0, duplicates: 0 });
    expect(row.planAttempts).toBe(2);
  });
});
