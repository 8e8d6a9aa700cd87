import type { EmailStream } from '../jobs/schemas/email-job.schema';

/** Who a sent message was for, as its `sent` event names them (ids only, no address). */
export interface SentMessage {
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  stream: EmailStream;
}
