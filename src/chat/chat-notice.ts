import type { ChatChannel } from './chat-channels';
import type { ChatData } from './schemas/chat-notification.schema';

/** What a producer hands to the notifier. */
export interface ChatNotice {
  appId: string;
  channel: ChatChannel;
  /** The domain event, e.g. `ticket.created`. */
  event: string;
  /** One line, e.g. `New ticket`; the key fields go in `data`. */
  summary: string;
  /** Flat values; `email` names the person the notification is about (found again by erasure). */
  data?: ChatData;
  /** A notice whose key is already stored is not stored again (default: a key of its own). */
  key?: string;
}
