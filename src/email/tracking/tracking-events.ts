import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { EmailEvent } from './schemas/email-event.schema';

export type TrackingEvent = Omit<EmailEvent, '_id'>;

/** Events written at most this long after they happen. */
export const FLUSH_INTERVAL_MS = 1_000;
/** Events waiting beyond this are dropped (and counted in a log line) rather than growing without limit. */
export const MAX_BUFFERED_EVENTS = 50_000;
/** One insert per this many events. */
const INSERT_BATCH = 5_000;

/**
 * Opens and clicks are recorded off the request path (DESIGN "Tracking"): the pixel answers without waiting
 * for the database. Events collect in memory and are written with `insertMany` every second, when a batch
 * fills, and at shutdown (nothing buffered is lost on SIGTERM).
 */
@Injectable()
export class TrackingEvents implements OnModuleInit, BeforeApplicationShutdown, OnModuleDestroy {
  private readonly logger = new Logger(TrackingEvents.name);
  private buffer: TrackingEvent[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private dropped = 0;

  constructor(@InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  record(event: TrackingEvent): void {
    if (this.buffer.length >= MAX_BUFFERED_EVENTS) {
      this.dropped += 1;
      return;
    }
    this.buffer.push(event);
    if (this.buffer.length >= INSERT_BATCH) void this.flush();
  }

  /** Writes what is buffered; writes run one after another, so a flush waits for the one before. */
  flush(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    const dropped = this.dropped;
    this.dropped = 0;
    this.writing = this.writing.then(() => this.write(batch, dropped));
    return this.writing;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Also on `app.close()` without shutdown hooks; a second flush of an empty buffer costs nothing. */
  async onModuleDestroy(): Promise<void> {
    await this.beforeApplicationShutdown();
  }

  private async write(batch: TrackingEvent[], dropped: number): Promise<void> {
    if (dropped > 0) this.logger.warn(`${dropped} tracking event(s) dropped: the buffer was full`);
    for (let i = 0; i < batch.length; i += INSERT_BATCH) {
      const slice = batch.slice(i, i + INSERT_BATCH);
      try {
        await this.events.collection.insertMany(slice, { ordered: false });
      } catch (error) {
        this.logger.error(`${slice.length} tracking event(s) not written: ${(error as Error).message}`);
      }
    }
  }
}
