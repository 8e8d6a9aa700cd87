import { getModelToken } from '@nestjs/mongoose';
import { ObjectId } from 'mongodb';
import type { Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { createTestApp, TestApp } from './helpers/app';
import { waitFor } from './helpers/wait';

/**
 * A job enqueued in a process whose worker runs is sent at once, not at the worker's next poll: here the
 * poll is an hour away, so only the signal of the insert can have started the runs (docs/queue.md,
 * "Jobs run as soon as they are added").
 */
describe('The e-mail worker woken by an insert', () => {
  let t: TestApp;

  beforeAll(async () => {
    delete process.env.SMTP_URL;
    process.env.EMAIL_WORKER_ENABLED = 'true';
    process.env.EMAIL_WORKER_INTERVAL_MS = '3600000';
    t = await createTestApp();
  });
  afterAll(() => t.close());

  async function statusesOf(ids: string[]): Promise<string[]> {
    const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    const found = await jobs.collection
      .find({ _id: { $in: ids.map((id) => new ObjectId(id)) } }, { projection: { status: 1 } })
      .toArray();
    return found.map((job) => String(job.status));
  }

  async function waitUntilCompleted(ids: string[]): Promise<void> {
    let statuses: string[] = [];
    await waitFor(
      async () => {
        statuses = await statusesOf(ids);
        return statuses.length === ids.length && statuses.every((status) => status === 'completed');
      },
      { describe: () => `jobs are ${statuses.join(', ')}, not all completed` },
    );
  }

  const message = (i: number) => ({
    to: `reader-${i}@example.com`,
    subject: `Wake ${i}`,
    text: 'Sent without waiting for the poll',
  });

  it('sends a job enqueued while no run is under way', async () => {
    const { id } = await t.app.get(EmailService).enqueueEmail(message(0));
    await waitUntilCompleted([id]);
  });

  it('sends jobs enqueued while a run is under way (the run ends, and another looks)', async () => {
    const email = t.app.get(EmailService);
    // Not awaited one by one: later inserts land while the run the first one started is scanning or sending.
    const enqueued = await Promise.all([1, 2, 3, 4, 5].map((i) => email.enqueueEmail(message(i))));
    await waitUntilCompleted(enqueued.map((job) => job.id));
  });
});
