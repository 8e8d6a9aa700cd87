import { Injectable, Module } from '@nestjs/common';
import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { JobHandler } from '../../src/queue/job-handler.decorator';
import { defineKind } from '../../src/queue/queue-kind';
import { QueueModule } from '../../src/queue/queue.module';
import { PermanentJobError } from '../../src/queue/retry-policy';

/**
 * A third job kind, for the tests only (docs/queue.md, "Adding a job kind"): thumbnails to render, in a
 * collection of their own, with status names of their own, to prove the engine owes nothing to the e-mail
 * and chat kinds. What a job does is scripted by its `script`: `ok`, `flaky` (a transient error, then
 * success), `refused` (a PermanentJobError) or `slow` (runs until the test opens `ThumbnailHandler.gate`).
 */
export type ThumbnailScript = 'ok' | 'flaky' | 'refused' | 'slow';

@Schema({ collection: 'test_thumbnails', timestamps: true })
export class Thumbnail {
  _id: Types.ObjectId;
  @Prop({ required: true }) status: string;
  @Prop({ default: 0 }) attempts: number;
  @Prop({ required: true }) runAt: Date;
  @Prop({ type: Object, required: true }) payload: { path: string; script: ThumbnailScript };
  @Prop() lastError?: string;
  @Prop() size?: number;
  @Prop() finishedAt?: Date;
}

export const ThumbnailSchema = SchemaFactory.createForClass(Thumbnail);
// The engine's scan: status (equality, two values), then runAt (sort and range).
ThumbnailSchema.index({ status: 1, runAt: 1 });

/** The kind's types: its job types and their payloads, the document, a success. */
export interface ThumbnailTypes {
  payloads: { 'thumbnail.render': Thumbnail['payload'] };
  job: Thumbnail;
  outcome: { status: 'ready'; size: number };
}

/** The whole kind, declared in one object. */
export const THUMBNAIL_KIND = defineKind<ThumbnailTypes>({
  name: 'thumbnail',
  model: { name: Thumbnail.name, schema: ThumbnailSchema },
  jobTypes: ['thumbnail.render'],
  typeOf: () => 'thumbnail.render',
  dueField: 'runAt',
  order: { runAt: 1 },
  statuses: { pending: 'queued', retrying: 'again', held: 'rendering', done: 'ready', dead: 'broken' },
  retry: {},
  doneFields: (outcome) => ({ size: outcome.size }),
  endFields: (now) => ({ finishedAt: now }),
  lapse: (job, settings) => ({
    to: job.attempts >= settings.maxAttempts ? 'dead' : 'due',
    error: 'Its worker stopped',
  }),
  // Runs only when a test asks (`processDue`), as the other kinds do in tests.
  settings: {
    env: {},
    defaults: {
      enabled: false,
      concurrency: 4,
      finishBatchSize: 4,
      // Short, so a test sees a lease lapse in real time (a live worker's own jobs never lapse).
      leaseMs: 1_000,
      maxAttempts: 3,
      backoff: { baseMs: 1, maxMs: 1 },
    },
  },
});

@Injectable()
export class ThumbnailHandler {
  /** Attempts started, by path. */
  readonly calls = new Map<string, number>();
  /** A `slow` job runs until this settles (a test replaces it with one it settles). */
  gate: Promise<void> = Promise.resolve();

  @JobHandler(THUMBNAIL_KIND, 'thumbnail.render')
  async render(job: Thumbnail): Promise<ThumbnailTypes['outcome']> {
    const { path, script } = job.payload;
    const call = (this.calls.get(path) ?? 0) + 1;
    this.calls.set(path, call);
    if (script === 'refused') throw new PermanentJobError(`${path}: not an image`);
    if (script === 'flaky' && call === 1) throw new Error(`${path}: storage timed out`);
    if (script === 'slow') await this.gate;
    return { status: 'ready', size: path.length };
  }
}

@Module({ imports: [QueueModule.forKind(THUMBNAIL_KIND)], providers: [ThumbnailHandler] })
export class ThumbnailKindModule {}

/**
 * Never provided: proof at compile time that a handler must take its job type's payload (`npm run
 * typecheck` fails if the decorator accepted this method, the expected error then being unused).
 */
export class MismatchedThumbnailHandler {
  // @ts-expect-error the payload of `thumbnail.render` is `{ path, script }`, not a number
  @JobHandler(THUMBNAIL_KIND, 'thumbnail.render')
  render(job: { payload: number }): Promise<ThumbnailTypes['outcome']> {
    return Promise.resolve({ status: 'ready', size: job.payload });
  }
}

/** A kind that declares a job type no provider handles: the boot refuses it. */
export const ORPHAN_KIND = defineKind<{
  payloads: { 'orphan.run': { n: number } };
  job: Thumbnail;
  outcome: { status: 'ready' };
}>({
  ...THUMBNAIL_KIND,
  name: 'orphan',
  jobTypes: ['orphan.run'],
  typeOf: () => 'orphan.run',
  doneFields: undefined,
});
