import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import { Model, trusted, Types } from 'mongoose';
import { failed, GroupCommit, type Settled, settled } from '../../common/database/group-commit';
import { insertedIndexes } from '../../common/database/bulk-writes';
import { type SentMessageRecord, SentMessageLookup } from '../jobs/sent-message-lookup';
import { SuppressionService } from '../suppression/suppression.service';
import { ComplaintGuard } from './complaint-guard';
import { EmailEventLedger, type NewEmailEvent } from './email-event-ledger';
import { ProviderEffects } from './provider-effects';
import { PRIMARY_PROVIDER, type ProviderEvent } from './provider-payload';
import { WebhookReceipt } from './schemas/analytics.schemas';

/** One event of a provider webhook, verified and read, with the key that recognises its repeats. */
export interface VerifiedDelivery {
  webhookId: string;
  event: ProviderEvent;
  receivedAt: Date;
}

export interface WebhookOutcome {
  processed: boolean;
  eventId: string | null;
}

/**
 * Deliveries stored together at most; a bigger burst forms several batches. Large enough for a provider's
 * burst on a few connections, small enough that one batch's writes stay well under the database's limits.
 */
const MAX_BATCH = 200;

/**
 * The stored event's id follows from the delivery's `webhook-id`: a retried delivery writes the same event.
 */
export function eventIdOf(webhookId: string): Types.ObjectId {
  return new Types.ObjectId(createHash('sha256').update(webhookId).digest().subarray(0, 12));
}

/**
 * Stores provider webhook deliveries as a group commit (GroupCommit): the deliveries that arrive together
 * are looked up, claimed, stored and counted with one command per collection for the whole batch, instead
 * of about ten per delivery. Each request is answered once its batch's writes are done, so a 2xx still means
 * stored, and a failure fails only the deliveries it concerns (the provider retries those).
 *
 * Per delivery, as when each was processed alone: its `webhook-id` is claimed with a receipt (unique `_id`)
 * before anything is written, and a repeat answers `processed:false` with the event stored the first time.
 * When storing the events fails, the batch's receipts are taken back and its requests fail; when a bounce's
 * or complaint's effects fail, that delivery's receipt is taken back and its request fails, so the retry
 * applies them (each effect is idempotent; the event keeps its id and is counted once). The ledger's expiry
 * and the complaint guard are only logged on failure: the next event of the message or campaign repeats them.
 */
@Injectable()
export class ProviderEventBatch {
  private readonly logger = new Logger(ProviderEventBatch.name);
  private readonly commit = new GroupCommit<VerifiedDelivery, WebhookOutcome>(
    (deliveries) => this.store(deliveries),
    MAX_BATCH,
  );

  constructor(
    @InjectModel(WebhookReceipt.name) private readonly receipts: Model<WebhookReceipt>,
    private readonly messages: SentMessageLookup,
    private readonly ledger: EmailEventLedger,
    private readonly effects: ProviderEffects,
    private readonly guard: ComplaintGuard,
    private readonly suppression: SuppressionService,
  ) {}

  /** Settles once the delivery is stored (or recognised as a repeat, or ignored). */
  ingest(delivery: VerifiedDelivery): Promise<WebhookOutcome> {
    return this.commit.submit(delivery);
  }

  private async store(deliveries: VerifiedDelivery[]): Promise<Settled<WebhookOutcome>[]> {
    const outcomes: Settled<WebhookOutcome>[] = deliveries.map(() => settled(IGNORED));
    const found = await this.messages.findMany(deliveries.flatMap(({ event }) => event.messageId ?? []));
    const known: { index: number; delivery: VerifiedDelivery; message: SentMessageRecord }[] = [];
    for (const [index, delivery] of deliveries.entries()) {
      const message = await this.messageOf(delivery.event, found);
      if (message) known.push({ index, delivery, message });
      else this.ignore(delivery.webhookId, `unknown message ${namedId(delivery.event).slice(0, 100)}`);
    }
    if (known.length === 0) return outcomes;

    const claimed = await this.claim(known.map(({ delivery }) => delivery));
    const repeats = known.filter((_, i) => !claimed.has(i));
    const claimedNow = new Set(
      known.filter((_, i) => claimed.has(i)).map(({ delivery }) => delivery.webhookId),
    );
    const unfinished = await this.answerRepeats(repeats, claimedNow, outcomes);
    const fresh = [...known.filter((_, i) => claimed.has(i)), ...unfinished];
    if (fresh.length === 0) return outcomes;

    try {
      await this.ledger.append(fresh.map(({ delivery, message }) => storedEvent(delivery, message)));
    } catch (error) {
      await this.release(fresh.map(({ delivery }) => delivery.webhookId));
      for (const { index } of fresh) outcomes[index] = failed(error);
      return outcomes;
    }
    const processed: typeof fresh = [];
    for (const entry of fresh) {
      const { delivery, message, index } = entry;
      const { event } = delivery;
      try {
        if (event.type === 'bounced' || event.type === 'complained') {
          await this.effects.apply({
            type: event.type,
            bounceType: event.bounceType,
            message,
            messageId: message.messageId,
            to: message.to ?? event.to,
            occurredAt: event.occurredAt,
          });
        }
        processed.push(entry);
        outcomes[index] = settled({ processed: true, eventId: String(eventIdOf(delivery.webhookId)) });
      } catch (error) {
        await this.release([delivery.webhookId]);
        outcomes[index] = failed(error);
      }
    }
    if (processed.length === 0) return outcomes;
    // Finished: a later repeat of these is answered from the receipt. Should this write fail, a repeat
    // processes the delivery again, which changes nothing (the event keeps its id, each effect is
    // idempotent).
    await this.logFailure('webhook receipts', () =>
      this.receipts
        .updateMany(
          { _id: trusted({ $in: processed.map(({ delivery }) => delivery.webhookId) }) },
          { $set: { done: true } },
        )
        .exec(),
    );
    // Providers report on a message for as long as it is alive to them: each report extends its ledger entry.
    await this.logFailure('message ledger', () =>
      this.messages.recordEvents(
        processed.map(({ message }) => message),
        processed[processed.length - 1].delivery.receivedAt,
      ),
    );
    const watched = processed.flatMap(({ delivery, message }) =>
      message.campaignId && (delivery.event.type === 'delivered' || delivery.event.type === 'complained')
        ? [message.campaignId]
        : [],
    );
    await this.logFailure('complaint guard', () => this.guard.checkMany(watched));
    // A delivery ends a soft-bounce suppression (docs/operations/email-delivery.md "Soft bounces").
    const delivered = processed.flatMap(({ delivery, message }) =>
      delivery.event.type === 'delivered' && message.to ? [message.to] : [],
    );
    await this.logFailure('soft-bounce lift', () => this.suppression.liftSoftBounces(delivered));
    return outcomes;
  }

  /**
   * By our Message-ID where the provider passed it back (read for the whole batch at once), else by the
   * provider's own id of the message (one indexed lookup).
   */
  private async messageOf(
    event: ProviderEvent,
    byOurs: Map<string, SentMessageRecord | null>,
  ): Promise<SentMessageRecord | null> {
    const found = event.messageId ? (byOurs.get(event.messageId) ?? null) : null;
    if (found || !event.providerMessageId) return found;
    return this.messages.findByProviderId(event.providerMessageId);
  }

  /**
   * Receipts for the deliveries, in one insert; returns the indexes claimed now (the others are repeats).
   * When the insert fails midway, the receipts it did write are taken back before the batch fails.
   */
  private claim(deliveries: VerifiedDelivery[]): Promise<Set<number>> {
    return insertedIndexes(
      this.receipts.collection,
      deliveries.map(({ webhookId, receivedAt }) => ({
        _id: webhookId,
        eventId: String(eventIdOf(webhookId)),
        receivedAt,
        done: false,
      })),
      (inserted) => this.release([...inserted].map((i) => deliveries[i].webhookId)),
    );
  }

  /**
   * A repeated delivery answers with the event its first delivery stored (one read for all repeats). A
   * receipt whose delivery never finished (its request failed, and taking the receipt back failed too, e.g.
   * the database went away in between) is no answer: that delivery is processed again, returned here. One
   * claimed in this very batch is a plain repeat, answered when its first delivery is.
   */
  private async answerRepeats<T extends { index: number; delivery: VerifiedDelivery }>(
    repeats: T[],
    claimedNow: Set<string>,
    outcomes: Settled<WebhookOutcome>[],
  ): Promise<T[]> {
    if (repeats.length === 0) return [];
    const firsts = await this.receipts
      .find({ _id: trusted({ $in: repeats.map(({ delivery }) => delivery.webhookId) }) })
      .lean<WebhookReceipt[]>()
      .exec();
    const byId = new Map(firsts.map((receipt) => [receipt._id, receipt]));
    const unfinished: T[] = [];
    for (const repeat of repeats) {
      const { index, delivery } = repeat;
      const first = byId.get(delivery.webhookId);
      if (first?.done === false && !claimedNow.has(delivery.webhookId)) unfinished.push(repeat);
      else outcomes[index] = settled({ processed: false, eventId: first?.eventId ?? null });
    }
    return unfinished;
  }

  /** Takes receipts back, so the provider's retry processes those deliveries again. */
  private async release(webhookIds: string[]): Promise<void> {
    if (webhookIds.length === 0) return;
    await this.receipts.deleteMany({ _id: trusted({ $in: webhookIds }) }).exec();
  }

  private ignore(webhookId: string, why: string): void {
    this.logger.warn(`Provider webhook ${webhookId.slice(0, 100)} not processed: ${why}`);
  }

  private async logFailure(what: string, step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (error) {
      this.logger.error(
        `Provider webhook: ${what} failed: ${(error as Error).message}`,
        (error as Error).stack,
      );
    }
  }
}

const IGNORED: WebhookOutcome = { processed: false, eventId: null };

const namedId = (event: ProviderEvent) => event.messageId ?? event.providerMessageId ?? '';

function storedEvent(delivery: VerifiedDelivery, message: SentMessageRecord): NewEmailEvent {
  const { event, webhookId } = delivery;
  return {
    _id: eventIdOf(webhookId),
    appId: message.appId,
    contactId: message.contactId,
    messageId: message.messageId,
    campaignId: message.campaignId,
    stream: message.stream,
    provider: PRIMARY_PROVIDER,
    type: event.type,
    ...(event.bounceType ? { bounceType: event.bounceType } : {}),
    ...(event.url ? { url: event.url } : {}),
    userAgent: event.userAgent,
    automated: event.automated,
    webhookId,
    createdAt: event.occurredAt,
  };
}
