import { getModelToken } from '@nestjs/mongoose';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { createTestApp, TestApp } from './helpers/app';
import { SAFETY_DEADLINE_MS } from './helpers/wait';

/**
 * Without SMTP_URL, messages become .eml files in DATA_DIR/outbox; here the scheduled worker (not a test
 * calling it) does the sending, as in `npm start`.
 */
describe('E-mail outbox and the scheduled worker', () => {
  let t: TestApp;

  beforeAll(async () => {
    delete process.env.SMTP_URL;
    process.env.EMAIL_WORKER_ENABLED = 'true';
    process.env.EMAIL_WORKER_INTERVAL_MS = '50';
    t = await createTestApp();
  });
  afterAll(() => t.close());

  async function waitForStatus(id: string, status: string): Promise<EmailJob> {
    const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    const deadline = Date.now() + SAFETY_DEADLINE_MS;
    for (;;) {
      const job = await jobs.findById(id).lean<EmailJob>().orFail().exec();
      if (job.status === status) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} is ${job.status}, not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('writes each message as an .eml file, sent by the worker on its interval', async () => {
    const { id } = await t.app.get(EmailService).enqueueEmail({
      to: 'dev@example.com',
      subject: 'Outbox check',
      text: 'Plain body',
      unsubscribeUrl: 'http://localhost:3000/unsubscribe/t',
    });
    const job = await waitForStatus(id, 'completed');
    expect(job.result).toMatchObject({ provider: 'outbox', messageId: `${id}@example.com` });

    const outbox = join(process.env.DATA_DIR!, 'outbox');
    const files = await readdir(outbox);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`${id}@example\\.com\\.eml$`));
    const eml = await readFile(join(outbox, files[0]), 'utf8');
    expect(eml).toContain('Subject: Outbox check');
    expect(eml).toContain(`Message-ID: <${id}@example.com>`);
    expect(eml).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    expect(eml).toContain('Plain body');
  });
});
