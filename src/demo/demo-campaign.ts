import type { INestApplicationContext } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import { type Model, Types } from 'mongoose';
import { createHash } from 'node:crypto';
import { EmailEventLedger, type NewEmailEvent } from '../email/events/email-event-ledger';
import { EmailWorker } from '../email/jobs/email-worker';
import { EmailEvent } from '../email/tracking/schemas/email-event.schema';
import { TrackingEvents } from '../email/tracking/tracking-events';
import { CampaignProgress } from '../newsletter/campaigns/campaign-progress';
import { CampaignsService } from '../newsletter/campaigns/campaigns.service';
import { Campaign } from '../newsletter/campaigns/schemas/campaign.schema';
import { DEMO_CAMPAIGN } from './demo-content';

/** The longest the seed waits for its campaign's messages (a few hundred take seconds). */
const SEND_DEADLINE_MS = 180_000;
const EVENT_BATCH = 200;
/** Mail-privacy proxies fetch every image: the open they report is not a person's. */
const PROXY_AGENT = 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)';
const READER_AGENT = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile';

export interface DemoCampaignReport {
  id: string;
  status: string;
  recipients: number;
  /** Engagement events written by this run (0 when an earlier run wrote them). */
  eventsAdded: number;
}

/** Stable in every run: the same (campaign, person, kind) always names the same event, written once. */
function eventId(...parts: string[]): Types.ObjectId {
  return new Types.ObjectId(createHash('sha256').update(parts.join(':')).digest('hex').slice(0, 24));
}

/** A stable number in [0, 1) per person, to decide who opens and clicks. */
function shareOf(contactId: string): number {
  return parseInt(createHash('sha256').update(contactId).digest('hex').slice(0, 8), 16) / 2 ** 32;
}

/**
 * Sends the demo campaign the way `POST …/campaigns/{id}/send` does (the plan job fans it out, the e-mail
 * worker delivers each message, to DATA_DIR/outbox without SMTP_URL), run in this process until every
 * message has its outcome and the campaign is `sent`.
 */
async function sendAndWait(app: INestApplicationContext, campaign: Campaign): Promise<Campaign> {
  const campaigns = app.get(CampaignsService);
  const id = String(campaign._id);
  if (campaign.status === 'draft') await campaigns.send(campaign.appId, id);
  const worker = app.get(EmailWorker);
  const progress = app.get(CampaignProgress);
  const deadline = Date.now() + SEND_DEADLINE_MS;
  for (;;) {
    await worker.processDueJobs();
    await progress.recount(id);
    const current = await campaigns.get(campaign.appId, id);
    if (current.status !== 'sending') {
      // The worker's `sent` events wait in the event buffer (flushed every second): write them now.
      await app.get(TrackingEvents).flush();
      return current;
    }
    if (Date.now() > deadline)
      throw new Error(`The demo campaign ${id} is still sending; run the seed again`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * What recipients did after the send, as the provider's webhook (`delivered`, a few soft bounces) and the
 * tracking routes (`opened`, `clicked`) record it: written through the ledger those paths use, so the
 * analytics counters count them the same way. Events fall between the send and now.
 */
function engagement(campaign: Campaign, sent: EmailEvent[], now: number): NewEmailEvent[] {
  const campaignId = String(campaign._id);
  const sentAt = campaign.sentAt?.getTime() ?? now;
  const events: NewEmailEvent[] = [];
  for (const message of sent) {
    const contactId = message.contactId!;
    const share = shareOf(contactId);
    const at = (fraction: number) => new Date(sentAt + (now - sentAt) * fraction);
    const event = (
      kind: string,
      type: NewEmailEvent['type'],
      fraction: number,
      extra: Partial<NewEmailEvent>,
    ) =>
      events.push({
        _id: eventId(campaignId, contactId, kind),
        appId: campaign.appId,
        contactId,
        messageId:
          type === 'opened' || type === 'clicked' ? `campaign:${campaignId}:${contactId}` : message.messageId,
        campaignId,
        provider: type === 'opened' || type === 'clicked' ? 'tracking' : 'primary',
        type,
        userAgent: null,
        automated: false,
        createdAt: at(fraction),
        ...extra,
      });
    if (share < 0.03) {
      event('bounce', 'bounced', 0.05, { bounceType: 'soft' });
      continue;
    }
    event('delivered', 'delivered', 0.05, {});
    if (share % 0.1 < 0.02) event('proxy-open', 'opened', 0.1, { automated: true, userAgent: PROXY_AGENT });
    if (share < 0.48) event('open', 'opened', 0.2 + share, { userAgent: READER_AGENT });
    if (share < 0.15) event('reopen', 'opened', 0.7 + share, { userAgent: READER_AGENT });
    campaign.links.forEach((url, linkIndex) => {
      if (share < (linkIndex === 0 ? 0.14 : 0.06)) {
        event(`click-${linkIndex}`, 'clicked', 0.3 + share, { linkIndex, url, userAgent: READER_AGENT });
      }
    });
  }
  return events;
}

/** The demo shop's sent campaign with its opens and clicks; found and completed, never sent twice. */
export async function seedDemoCampaign(
  app: INestApplicationContext,
  appId: string,
  adminId: string,
): Promise<DemoCampaignReport> {
  const model = app.get<Model<Campaign>>(getModelToken(Campaign.name));
  const existing = await model.findOne({ appId, name: DEMO_CAMPAIGN.name }).lean<Campaign>();
  const draft = existing ?? (await app.get(CampaignsService).create(appId, DEMO_CAMPAIGN, adminId));
  const campaign = await sendAndWait(app, draft);
  const sent = await app
    .get<Model<EmailEvent>>(getModelToken(EmailEvent.name))
    .find({ campaignId: String(campaign._id), type: 'sent' })
    .lean<EmailEvent[]>();
  const events = engagement(campaign, sent, Date.now());
  const ledger = app.get(EmailEventLedger);
  let eventsAdded = 0;
  for (let start = 0; start < events.length; start += EVENT_BATCH) {
    eventsAdded += (await ledger.append(events.slice(start, start + EVENT_BATCH))).length;
  }
  return { id: String(campaign._id), status: campaign.status, recipients: sent.length, eventsAdded };
}
