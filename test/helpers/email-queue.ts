import { getModelToken } from '@nestjs/mongoose';
import { trusted, type Model } from 'mongoose';
import { type DueJob, EmailJobStore } from '../../src/email/jobs/email-job.store';
import { EmailWorker } from '../../src/email/jobs/email-worker';
import { EmailJob } from '../../src/email/jobs/schemas/email-job.schema';
import type { TestApp } from './app';
import { SAFETY_DEADLINE_MS } from './wait';

export interface DrainOptions {
  deadlineMs?: number;
  /**
   * Only jobs due before the deadline count as open: a job scheduled beyond it (tomorrow's, a held
   * campaign's) does not keep the drain waiting, while a retry due in a few milliseconds does.
   */
  dueOnly?: boolean;
}

/**
 * Runs the app's e-mail worker until no job is pending, processing or waiting for a retry (tests run without
 * the background worker, see test/setup/test-env.ts); fails when jobs are still open at the deadline.
 */
export async function drainEmailQueue(t: TestApp, options: DrainOptions = {}): Promise<void> {
  const worker = t.app.get(EmailWorker);
  const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  const deadlineMs = options.deadlineMs ?? SAFETY_DEADLINE_MS;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    await worker.processDueJobs();
    const open = await jobs
      .countDocuments({
        status: trusted({ $in: ['pending', 'processing', 'failed'] }),
        ...(options.dueOnly ? { scheduledAt: trusted({ $lte: new Date(deadline) }) } : {}),
      })
      .exec();
    if (open === 0) return;
    if (Date.now() > deadline) throw new Error(`${open} job(s) still open after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first `limit` due jobs of a scan, as a worker would read them (to claim them by hand in a test). */
export async function firstDue(t: TestApp, limit: number): Promise<DueJob[]> {
  const scan = t.app.get(EmailJobStore).scanDue(limit);
  try {
    return await scan.next();
  } finally {
    await scan.close();
  }
}
