import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  NotFoundException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Model, trusted } from 'mongoose';
import type { AppConfig } from '../config/env';
import { ContactErasure } from './contact-erasure';
import { Contact } from './schemas/contact.schema';

const INTERVAL_NAME = 'contact-erasure-sweep';
const SWEEP_INTERVAL_MS = 60_000;
/** An erasure older than this is no longer running: its request has long ended (or its process died). */
export const INTERRUPTED_AFTER_MS = 10 * 60_000;
/** Erasures finished per sweep at most: a backlog is worked off a few at a time. */
const MAX_PER_SWEEP = 20;

/**
 * Finishes GDPR deletes that were interrupted (docs/operations/data-retention.md "GDPR erasure"): a record
 * still marked `erasureStartedAt` ten minutes after the delete began is erased again, as the admin who
 * asked. Runs in every process that runs the e-mail worker; a record is claimed by moving its mark
 * forward, so two processes never erase it at the same time.
 */
@Injectable()
export class ContactErasureSweep implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ContactErasureSweep.name);
  private running = false;

  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly erasure: ContactErasure,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.get('EMAIL_WORKER_ENABLED', { infer: true })) return;
    this.scheduler.addInterval(
      INTERVAL_NAME,
      setInterval(() => void this.tick(), SWEEP_INTERVAL_MS),
    );
  }

  beforeApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) this.scheduler.deleteInterval(INTERVAL_NAME);
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.resumeInterrupted();
    } catch (error) {
      this.logger.error(`Erasure sweep failed: ${(error as Error).message}`, (error as Error).stack);
    } finally {
      this.running = false;
    }
  }

  /** Finishes the erasures interrupted before `now`; returns how many were finished. */
  async resumeInterrupted(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - INTERRUPTED_AFTER_MS);
    let finished = 0;
    for (let round = 0; round < MAX_PER_SWEEP; round++) {
      const claimed = await this.contacts
        .findOneAndUpdate(
          // The filter is the service's own: `trusted` keeps sanitizeFilter from reading `$lte` as a value.
          { erasureStartedAt: trusted({ $lte: cutoff }) },
          { $set: { erasureStartedAt: now } },
          { projection: { erasureActor: 1 }, timestamps: false },
        )
        .lean<Pick<Contact, '_id' | 'erasureActor'>>()
        .exec();
      if (!claimed) break;
      try {
        await this.erasure.erase(String(claimed._id), claimed.erasureActor ?? 'system');
        finished++;
      } catch (error) {
        if (error instanceof NotFoundException) {
          // Erased meanwhile by a delete sent again: nothing left to finish.
          await this.contacts
            .updateOne({ _id: claimed._id }, { $unset: { erasureStartedAt: '', erasureActor: '' } })
            .exec();
          continue;
        }
        // Left marked: the next sweep tries again (an e-mail being sent to the person, say).
        this.logger.warn(
          `Erasure of contact ${String(claimed._id)} not finished: ${(error as Error).message}`,
        );
      }
    }
    return finished;
  }
}
