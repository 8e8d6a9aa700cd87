import { Injectable } from '@nestjs/common';
import type { EmailMessage } from '../jobs/email-message';
import type { RenderedContent, SendableTemplate } from './template-source';

/** What a composer renders; `sender` (a stored template's) replaces `MAIL_FROM` when there is no `from`. */
export interface ComposedContent extends RenderedContent {
  sender?: SendableTemplate['sender'];
}

/**
 * Renders the content of a message named by `EmailMessage.composer` when it is sent. Null means the message
 * can never be composed (say, its campaign does not exist): the job is dead at once. A thrown error is a
 * failed attempt, retried like a network error (the database was unreachable, say).
 */
export type MessageComposer = (message: EmailMessage) => Promise<ComposedContent | null>;

/**
 * Composers by kind. A module whose messages share most of their content (newsletters: a campaign sent to
 * thousands of people) registers one at start-up and queues only what differs per person; the worker
 * renders each message as it sends it, so the queue holds a few hundred bytes per message instead of its
 * whole body (written once, then read and rewritten by every claim and outcome). A message that carries a
 * secret (a sign-in link) is composed at send time too, so its rendered body is never stored.
 */
@Injectable()
export class MessageComposers {
  private readonly composers = new Map<string, MessageComposer>();

  register(kind: string, composer: MessageComposer): void {
    if (this.composers.has(kind)) throw new Error(`A message composer for "${kind}" is already registered`);
    this.composers.set(kind, composer);
  }

  get(kind: string): MessageComposer | undefined {
    return this.composers.get(kind);
  }
}
