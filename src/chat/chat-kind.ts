import type { ObjectId } from 'mongodb';
import { defineKind } from '../queue/queue-kind';
import type { ChatScan } from './delivery/chat-scan';
import { CHAT_DELIVERY_OPTIONS, DEFAULT_CHAT_DELIVERY_OPTIONS } from './delivery/delivery-options';
import {
  CHAT_KIND_STATUSES,
  type ChatDestinationKind,
  ChatNotification,
  ChatNotificationSchema,
  type WebhookFormat,
} from './schemas/chat-notification.schema';

/** The one job type of the outbox: deliver a notification (`@JobHandler(CHAT_KIND, 'chat.deliver')`). */
export const CHAT_DELIVER = 'chat.deliver';

export const LAPSED_DELIVERY_ERROR = 'The worker stopped during delivery; tried again';

/** Where a notification went, on success and on a failed attempt alike. */
interface Where {
  destination?: ChatDestinationKind;
  format?: WebhookFormat;
}

/** A delivered notification, and where it went. */
export type Delivered = { status: 'delivered'; destination: ChatDestinationKind; format?: WebhookFormat };

/** The outbox's types: the notification is the whole job (no payload apart), its success, its scan. */
export interface ChatKindTypes {
  payloads: { [CHAT_DELIVER]: object };
  job: ChatNotification;
  outcome: Delivered;
  scan: ChatScan;
}

/** What a handler answers: delivered, or a failed attempt (with where it went). */
export type DeliveryOutcome =
  | Delivered
  | ({ status: 'failed'; error: string; retryAt: Date } & Where)
  | ({ status: 'dead'; error: string } & Where);

/**
 * The outbox (`chat_notifications`) as a kind of the lease-queue engine: due oldest first, retried with
 * exponential backoff until `maxAttempts`; a notification whose worker stopped is due again at once (dead
 * when that was its last attempt): a chat line sent twice is better than one lost.
 */
export const CHAT_KIND = defineKind<ChatKindTypes>({
  name: 'chat',
  model: { name: ChatNotification.name, schema: ChatNotificationSchema },
  jobTypes: [CHAT_DELIVER],
  typeOf: () => CHAT_DELIVER,
  dueField: 'nextAttemptAt',
  order: { nextAttemptAt: 1 },
  statuses: CHAT_KIND_STATUSES,
  retry: {},
  due: { projection: { _id: 1 }, of: (doc) => ({ _id: doc._id as ObjectId, priority: 0 }) },
  doneFields: (_outcome, now) => ({ deliveredAt: now }),
  attemptFields: (outcome) => {
    const { destination, format } = outcome as Where;
    return { ...(destination ? { destination } : {}), ...(format ? { format } : {}) };
  },
  lapse: (job, settings) => ({
    to: job.attempts >= settings.maxAttempts ? 'dead' : 'due',
    error: LAPSED_DELIVERY_ERROR,
  }),
  settings: {
    env: {
      enabled: 'CHAT_WORKER_ENABLED',
      intervalMs: 'CHAT_WORKER_INTERVAL_MS',
      // How long a delivered or dead notification is kept (the digest's counts, a look back).
      retentionDays: 'CHAT_NOTIFICATION_RETENTION_DAYS',
    },
    defaults: DEFAULT_CHAT_DELIVERY_OPTIONS,
    token: CHAT_DELIVERY_OPTIONS,
  },
});
