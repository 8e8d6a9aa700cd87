import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { Role } from '../src/common/auth/roles';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { useMailApp } from './helpers/mail-app';
import { type ReceivedMail, TestSmtpServer } from './helpers/smtp';

const ORIGIN = 'https://shop.example.com';
/** A magic-link token as it appears in a link (256 random bits, base64url). */
const TOKEN_IN_LINK = /token=([A-Za-z0-9_-]{43})/;
/** What a job view shows instead of a secret or a rendered transactional body. */
const REDACTED = '[redacted]';

/** The text of a received message with quoted-printable soft breaks and escapes undone. */
const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Found in a review (docs/decisions/security-secrets-in-jobs.md): a viewer read sign-in links out of the
 * queue's views (and the queue stored them in clear). The token is now sealed in the job and only the sending
 * worker opens it; job views redact.
 */
describe('Secrets in e-mail jobs', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let jobs: Model<EmailJob>;
  let viewer: Session;
  let appId: string;
  let publicKey: string;

  const mailApp = useMailApp({ env: { MAIL_FROM: 'Admin Service <no-reply@mail.example.com>' } });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  });
  beforeEach(async () => {
    viewer = await createSession(t, Role.Viewer);
    const app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
    appId = app.id;
    publicKey = app.publicKey;
  });

  async function requestLink(email: string): Promise<void> {
    const res = await t.http.post('/auth/magic-link', { email, appId });
    expect(res.status).toBe(200);
    await t.app.get(MagicLinkService).idle();
  }

  /** Everything a viewer can read about the queue: the list and every job by id. */
  async function viewerReads(): Promise<string> {
    const list = await viewer.http.get('/admin/email-jobs?limit=100');
    expect(list.status).toBe(200);
    const ids = (list.body.data as { _id: string }[]).map((job) => job._id);
    const singles = await Promise.all(ids.map((id) => viewer.http.get(`/admin/email-jobs/${id}`)));
    for (const single of singles) expect(single.status).toBe(200);
    return JSON.stringify([list.body, ...singles.map((single) => single.body)]);
  }

  const rawJobs = async () => JSON.stringify(await jobs.collection.find().toArray());

  it("the issue's repro: a viewer finds no sign-in token in the job views, before or after sending", async () => {
    await requestLink('ada@example.com');
    const beforeSending = await viewerReads();
    expect(beforeSending).not.toMatch(TOKEN_IN_LINK);

    await drainEmailQueue(t);
    const [mail] = smtp.received;
    const token = TOKEN_IN_LINK.exec(decoded(mail))![1];
    const afterSending = await viewerReads();
    expect(beforeSending).not.toContain(token);
    expect(afterSending).not.toContain(token);
    expect(afterSending).not.toMatch(TOKEN_IN_LINK);

    // The link in the mail still signs in.
    const verified = await t.http.post('/auth/magic-link/verify', { token });
    expect(verified.status).toBe(200);
  });

  it('stores no token in clear in email_jobs: the raw document holds only a sealed value', async () => {
    await requestLink('ada@example.com');
    const queued = await rawJobs();
    expect(queued).not.toMatch(TOKEN_IN_LINK);
    const [job] = await jobs.collection.find().toArray();
    // No rendered body either: the worker composes the mail when it sends it.
    expect(job.payload).not.toHaveProperty('html');
    expect(job.payload).not.toHaveProperty('text');
    expect(job.payload.sealed).toMatch(/^v1\./);

    await drainEmailQueue(t);
    const token = TOKEN_IN_LINK.exec(decoded(smtp.received[0]))![1];
    expect(queued).not.toContain(token);
    expect(await rawJobs()).not.toContain(token);
  });

  it('shows sealed fields, rendered transactional bodies and unsubscribe links as redacted, and says so', async () => {
    await requestLink('ada@example.com');
    const joined = await t.http.post(
      '/joinlist',
      { email: 'bob@example.com', appId },
      { headers: { 'x-app-key': publicKey, origin: ORIGIN } },
    );
    expect(joined.status).toBe(200);
    const list = await viewer.http.get('/admin/email-jobs?limit=100');
    const payloads = (list.body.data as { payload: Record<string, unknown> }[]).map((job) => job.payload);
    const signIn = payloads.find((payload) => payload.to === 'ada@example.com')!;
    const welcome = payloads.find((payload) => payload.to === 'bob@example.com')!;
    expect(signIn.sealed).toBe(REDACTED);
    expect(welcome).toMatchObject({ unsubscribeUrl: REDACTED });
    expect(welcome.html ?? REDACTED).toBe(REDACTED);
    expect(welcome.text ?? REDACTED).toBe(REDACTED);
    expect(JSON.stringify(welcome)).not.toMatch(/\/unsubscribe\//);

    const doc = (await t.http.get('/docs-json')).body as {
      components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
    };
    expect(doc.components.schemas.EmailJobView.properties.payload.description).toMatch(/redacted/i);
  });
});
