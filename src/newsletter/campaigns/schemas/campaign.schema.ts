import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { TEMPLATE_LIMITS } from '../../../email/templates/template-limits';
import { type SegmentFilter, SegmentFilterSchema } from '../../segments/schemas/segment.schema';

/**
 * docs/architecture.md "Campaigns": `draft` → (`scheduled` →) `sending` → `sent` (or `failed`); only drafts
 * change or go away, and a scheduled campaign goes back to `draft` when unscheduled.
 */
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'sent', 'failed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const CAMPAIGN_NAME_MAX = 200;
export const CAMPAIGN_SUBJECT_MAX = 998;
/** The template size limit (email/templates/template-limits.ts), refused by the DTO before any compile. */
export const CAMPAIGN_CONTENT_MAX = TEMPLATE_LIMITS.maxLength;

/**
 * Final outcomes of the campaign's messages: `total` messages queued, `sent` handed to the provider, `failed`
 * ended without delivery (dead, or skipped because the address was suppressed by the time it was sent).
 */
@Schema({ _id: false })
export class CampaignStats {
  @Prop({ default: 0 }) total: number;
  @Prop({ default: 0 }) sent: number;
  @Prop({ default: 0 }) failed: number;
}
const CampaignStatsSchema = SchemaFactory.createForClass(CampaignStats);

@Schema({ collection: 'campaigns', timestamps: true, minimize: false })
export class Campaign {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true }) name: string;
  @Prop({ required: true }) subject: string;
  @Prop({ required: true }) htmlContent: string;
  @Prop({ type: String, default: null }) textContent: string | null;
  @Prop({ type: String, default: null }) templateId: string | null;
  @Prop({ type: String, enum: CAMPAIGN_STATUSES, default: 'draft' }) status: CampaignStatus;
  @Prop({ type: CampaignStatsSchema, default: () => ({}) }) stats: CampaignStats;
  @Prop({ type: Date, default: null }) sentAt: Date | null;
  /** When a `scheduled` campaign starts (the worker's scheduler claims it then); null otherwise. */
  @Prop({ type: Date, default: null }) sendAt: Date | null;
  /** The segment it goes to (null: every active subscriber of the app). */
  @Prop({ type: String, default: null }) segmentId: string | null;
  /** The app's newsletter topic it is about: people who dropped it are skipped (null: no topic). */
  @Prop({ type: String, default: null }) topic: string | null;
  /** The segment's filter as it was when the campaign started: a resumed plan walks the same audience. */
  @Prop({ type: SegmentFilterSchema, default: null }) audience: SegmentFilter | null;
  @Prop({ type: Date, default: null }) completedAt: Date | null;
  /** Id of the back-office user who created it. */
  @Prop({ type: String, default: null }) createdBy: string | null;

  /** The tracked links' URLs in order, fixed when the campaign is sent: where `/c/{token}` redirects. */
  @Prop({ type: [String], default: [] }) links: string[];
  /** The `email.batch.plan` job that fans the campaign out. */
  @Prop({ type: String, default: null }) planJobId: string | null;
  /**
   * The plan's checkpoint: the last person (`_id`) whose message is queued; a resumed plan starts after it.
   */
  @Prop({ type: String, default: null }) planCursor: string | null;
  /** The plan has queued every message (the campaign completes once the plan job is recorded `completed`). */
  @Prop({ default: false }) planned: boolean;
  /**
   * Set while the complaint guard holds the campaign's remaining messages (why, in words), cleared when an
   * admin resumes it (`POST …/campaigns/{id}/resume`). The status stays `sending` meanwhile.
   */
  @Prop({ type: String, default: null }) heldReason: string | null;
  @Prop({ type: Date, default: null }) heldAt: Date | null;

  createdAt: Date;
  updatedAt: Date;
}

export const CampaignSchema = SchemaFactory.createForClass(Campaign);
// The app's list, newest first (`_id`: the page's tie-breaker), optionally by status.
CampaignSchema.index({ appId: 1, createdAt: -1, _id: -1 });
CampaignSchema.index({ appId: 1, status: 1, createdAt: -1, _id: -1 });
// CampaignProgress.sweep: the campaigns still sending, across apps (a background task, not a request);
// CampaignScheduler: the scheduled campaigns whose time has come, by `sendAt`.
CampaignSchema.index({ status: 1, sendAt: 1 });
// CampaignScheduler: started campaigns whose plan job was never queued (the process died in between).
CampaignSchema.index({ status: 1, planJobId: 1, sentAt: 1 });
// A segment's delete: is it the audience of a draft or scheduled campaign.
CampaignSchema.index({ appId: 1, segmentId: 1, status: 1 });
