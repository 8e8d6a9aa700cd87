import { Injectable, Module } from '@nestjs/common';
import { InjectModel, MongooseModule, Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import { ObjectId } from 'mongodb';
import type { Model, Types } from 'mongoose';
import { JobHandler } from '../../src/queue/job-handler.decorator';
import { JobHandlers } from '../../src/queue/job-handlers';
import { leaseFields } from '../../src/queue/lease-fields';
import { LeaseQueueStore } from '../../src/queue/lease-queue.store';
import { type JobContext, PollingWorker, type WorkerSettings } from '../../src/queue/polling-worker';
import type { DueJob, QueueKind } from '../../src/queue/queue-kind';
import { type FailedAttempt, PermanentJobError } from '../../src/queue/retry-policy';
import { WorkerHeartbeat } from '../../src/queue/worker-heartbeat';

/**
 * A third job kind, for the tests only (docs/queue.md, "Adding a job kind"): thumbnails to render, in a
 * collection of their own, with status names of their own, to prove the engine owes nothing to the e-mail
 * and chat kinds. What a job does is scripted by its `script`: `ok`, `flaky` (a transient error, then
 * success) or `refused` (a PermanentJobError).
 */
export type ThumbnailScript = 'ok' | 'flaky' | 'refused';

/** The kind's job types and their payloads (one here). */
export interface ThumbnailPayloads {
  'thumbnail.render': { path: string; script: ThumbnailScript };
}

@Schema({ collection: 'test_thumbnails', timestamps: true })
export class Thumbnail {
  _id: Types.ObjectId;
  @Prop({ required: true }) status: string;
  @Prop({ default: 0 }) attempts: number;
  @Prop({ required: true }) runAt: Date;
  @Prop({ type: Object, required: true }) payload: ThumbnailPayloads['thumbnail.render'];
  @Prop() lastError?: string;
  @Prop() size?: number;
  @Prop() finishedAt?: Date;
}

export const ThumbnailSchema = SchemaFactory.createForClass(Thumbnail);
ThumbnailSchema.plugin(leaseFields);
// The engine's scan: status (equality, two values), then runAt (sort and range).
ThumbnailSchema.index({ status: 1, runAt: 1 });

type ThumbnailOutcome = { status: 'ready'; size: number } | FailedAttempt;

/** The whole kind, declared in one object. */
const THUMBNAIL_KIND: QueueKind<Thumbnail, DueJob, ThumbnailOutcome> = {
  name: 'thumbnail',
  types: ['thumbnail.render'],
  typeOf: () => 'thumbnail.render',
  dueField: 'runAt',
  statuses: { pending: 'queued', retrying: 'again', held: 'rendering', done: 'ready', dead: 'broken' },
  retry: { maxAttempts: () => 3, backoff: () => ({ baseMs: 1, maxMs: 1 }) },
  dueSort: { runAt: 1 },
  dueProjection: { _id: 1 },
  dueJobOf: (doc) => ({ _id: doc._id as ObjectId, priority: 0 }),
  outcomeUpdate: (outcome) => {
    switch (outcome.status) {
      case 'ready':
        return { set: { status: 'ready', size: outcome.size } };
      case 'failed':
        return { set: { lastError: outcome.error }, retryAt: outcome.retryAt };
      case 'dead':
        return { set: { status: 'broken', lastError: outcome.error } };
    }
  },
  endFields: (now) => ({ finishedAt: now }),
  heldProjection: {},
  lapsed: (job) =>
    job.attempts >= 3
      ? { to: 'dead', error: 'Its worker stopped' }
      : { to: 'due', error: 'Its worker stopped' },
};

@Injectable()
export class ThumbnailStore extends LeaseQueueStore<Thumbnail, DueJob, ThumbnailOutcome> {
  constructor(@InjectModel(Thumbnail.name) private readonly model: Model<Thumbnail>) {
    super(() => model.collection, THUMBNAIL_KIND);
  }

  /** Queues a thumbnail, due now. */
  async add(payload: ThumbnailPayloads['thumbnail.render']): Promise<string> {
    const _id = new ObjectId();
    await this.model.create({ _id, ...this.newJobFields(_id), runAt: new Date(), payload });
    return String(_id);
  }
}

@Injectable()
export class ThumbnailHandler {
  /** Attempts started, by path. */
  readonly calls = new Map<string, number>();

  @JobHandler('thumbnail.render')
  render(job: Thumbnail, _context: JobContext<undefined>): Promise<ThumbnailOutcome> {
    const { path, script } = job.payload;
    const call = (this.calls.get(path) ?? 0) + 1;
    this.calls.set(path, call);
    if (script === 'refused') throw new PermanentJobError(`${path}: not an image`);
    if (script === 'flaky' && call === 1) throw new Error(`${path}: storage timed out`);
    return Promise.resolve({ status: 'ready', size: path.length });
  }
}

/** Runs only when a test asks (`processDue`), as the other kinds do in tests. */
@Injectable()
export class ThumbnailWorker extends PollingWorker<Thumbnail, DueJob, ThumbnailOutcome> {
  constructor(
    store: ThumbnailStore,
    handlers: JobHandlers,
    scheduler: SchedulerRegistry,
    heartbeat: WorkerHeartbeat,
  ) {
    super(ThumbnailWorker.name, store, handlers, scheduler, heartbeat);
  }

  protected settings(): WorkerSettings {
    return {
      enabled: false,
      intervalMs: 1_000,
      concurrency: 4,
      ratePerSecond: 0,
      leaseMs: 60_000,
      scanSize: 50,
      rescanAfterMs: 2_000,
      finishBatchSize: 4,
      reapEveryMs: 5_000,
      shutdownMs: 2_000,
    };
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: Thumbnail.name, schema: ThumbnailSchema }])],
  providers: [ThumbnailStore, ThumbnailHandler, ThumbnailWorker],
})
export class ThumbnailKindModule {}
