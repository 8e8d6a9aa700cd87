import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EmailJobStore } from '../src/email/jobs/email-job.store';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { ledgerMessageOf } from '../src/email/jobs/message-ledger';
import { SentEvents } from '../src/email/events/sent-events';
import { HEARTBEAT_TTL_MS, WorkerHeartbeat } from '../src/queue/worker-heartbeat';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { firstDue } from './helpers/email-queue';
import { waitFor } from './helpers/worker-process';

/**
 * Leases judged by their holder's heartbeat, and `sent` events written with the outcomes (keyed by job):
 * what a killed worker leaves behind is recovered at once and counted once.
 */
describe('Worker heartbeat and sent events', () => {
  let t: TestApp;
  const jobs = () => t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  const jobById = (id: string) => jobs().findById(id).lean<EmailJob>().orFail().exec();
  const workers = () => t.connection.collection<{ _id: string; aliveUntil: Date }>('queue_workers');

  beforeAll(async () => {
    t = await createTestApp();
    await resetDatabase(t.connection);
  });
  afterAll(async () => {
    await t.app.get(WorkerHeartbeat).stop();
    await t.close();
  });

  /** Enqueues one message per address and claims each for the holder named (leases of `leaseMs`). */
  async function claimedBy(holders: { to: string; workerId: string; leaseMs: number }[]) {
    const store = t.app.get(EmailJobStore);
    const ids: string[] = [];
    for (const { to, workerId, leaseMs } of holders) {
      const { id } = await t.app.get(EmailService).enqueueEmail({ to, subject: 'Hi', text: 'Hi' });
      const due = (await firstDue(t, 50)).filter((job) => String(job._id) === id);
      const claimed = await store.claimMany(due, () => `${workerId}.${id}`, leaseMs, new Date(), workerId);
      expect(claimed).toHaveLength(1);
      ids.push(id);
    }
    return ids;
  }

  it('recovers the jobs of a holder whose heartbeat lapsed at once, never a live holder’s, whatever the lease', async () => {
    const heartbeat = t.app.get(WorkerHeartbeat);
    heartbeat.start();
    await waitFor(async () => (await workers().countDocuments({ _id: heartbeat.id })) === 1, {
      timeoutMs: 30_000,
      describe: () => 'the heartbeat was never written',
    });
    const now = Date.now();
    await workers().insertMany([
      { _id: 'dead-host:1:a', aliveUntil: new Date(now - 1_000) },
      { _id: 'live-host:2:b', aliveUntil: new Date(now + 120_000) },
    ]);
    const [ofDead, ofLiveExpired, ofUnknown] = await claimedBy([
      { to: 'dead@example.com', workerId: 'dead-host:1:a', leaseMs: 300_000 },
      { to: 'live@example.com', workerId: 'live-host:2:b', leaseMs: 1 },
      { to: 'unknown@example.com', workerId: 'gone-host:3:c', leaseMs: 300_000 },
    ]);
    const store = t.app.get(EmailJobStore);

    // A reaper whose own heartbeat is new judges no one yet (after an outage, others get a TTL to renew).
    expect(await store.reapLapsed(new Date(now + 5), heartbeat)).toEqual([]);
    // Once it has beaten for a whole TTL: the dead holder's job is back at once (never handed: pending).
    const later = new Date(now + HEARTBEAT_TTL_MS + 1_000);
    const reaped = await store.reapLapsed(later, heartbeat);
    expect(reaped.map(({ job }) => String(job._id))).toEqual([ofDead]);
    expect(await jobById(ofDead)).toMatchObject({ status: 'pending', attempts: 1 });
    // The live holder keeps its job although its lease ran out; an unknown holder's waits for its lease.
    expect(await jobById(ofLiveExpired)).toMatchObject({ status: 'processing', workerId: 'live-host:2:b' });
    expect(await jobById(ofUnknown)).toMatchObject({ status: 'processing' });
  });

  it('completes a job whose worker died after its sent event, and never writes or counts two events', async () => {
    const heartbeat = t.app.get(WorkerHeartbeat);
    const store = t.app.get(EmailJobStore);
    await workers().insertOne({ _id: 'killed-host:4:d', aliveUntil: new Date(Date.now() - 1_000) });
    const [id] = await claimedBy([{ to: 'sent@example.com', workerId: 'killed-host:4:d', leaseMs: 300_000 }]);
    await store.markHanded([`killed-host:4:d.${id}`]);
    // The worker wrote the batch's sent event (twice: a write tried again), then was killed.
    const job = await jobById(id);
    const send = {
      jobId: job._id,
      messageId: `${id}@example.com`,
      provider: 'smtp',
      message: { appId: null, campaignId: 'c-heartbeat', contactId: null, stream: 'broadcast' as const },
      resentAfterUnknown: false,
    };
    const sentEvents = t.app.get(SentEvents);
    await sentEvents.write([send]);
    await sentEvents.write([send]);
    expect(ledgerMessageOf(job).jobId).toEqual(job._id);

    const reaped = await store.reapLapsed(new Date(Date.now() + HEARTBEAT_TTL_MS + 1_000), heartbeat);
    expect(reaped.map(({ rule }) => rule.to)).toEqual(['done']);
    expect(await jobById(id)).toMatchObject({
      status: 'completed',
      messageId: `${id}@example.com`,
      result: { recoveredFrom: 'sent event' },
    });
    expect(
      await t.connection.collection('email_events').countDocuments({ messageId: `${id}@example.com` }),
    ).toBe(1);
    const counters = await t.connection
      .collection<{ _id: string; totals: { sent?: number } }>('email_campaign_counters')
      .findOne({ _id: 'c-heartbeat' });
    expect(counters?.totals.sent).toBe(1);
  });
});
