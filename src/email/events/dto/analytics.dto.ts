import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { EMAIL_STREAMS, type EmailStream } from '../../jobs/schemas/email-job.schema';
import { EMAIL_EVENT_TYPES } from '../../tracking/schemas/email-event.schema';

export class TopLink {
  @ApiProperty() url: string;
  @ApiProperty({ description: 'Human clicks' }) clicks: number;
}

export class TimelineEntry {
  @ApiProperty({ example: '2026-11-23', description: 'UTC day' }) date: string;
  @ApiProperty({ enum: [...EMAIL_EVENT_TYPES, 'automatedOpened', 'automatedClicked'] }) type: string;
  @ApiProperty() count: number;
}

export class CampaignAnalyticsView {
  @ApiProperty() campaignId: string;
  @ApiProperty() sent: number;
  @ApiProperty({
    description:
      'Of sent: messages sent again after an attempt whose outcome was unknown (its worker died after ' +
      'handing the message over), which the person may have received twice',
  })
  resentAfterUnknown: number;
  @ApiProperty() delivered: number;
  @ApiProperty({ description: 'Human opens (automated ones in automatedOpens)' }) opened: number;
  @ApiProperty({ description: 'People with at least one human open' }) uniqueOpens: number;
  @ApiProperty({ description: 'Human clicks (automated ones in automatedClicks)' }) clicked: number;
  @ApiProperty({ description: 'People with at least one human click' }) uniqueClicks: number;
  @ApiProperty() bounced: number;
  @ApiProperty() hardBounced: number;
  @ApiProperty() complained: number;
  @ApiProperty() unsubscribed: number;
  @ApiProperty({ description: 'Opens by mail-privacy proxies and scanners, not counted as opens' })
  automatedOpens: number;
  @ApiProperty({ description: 'Clicks by link scanners, not counted as clicks' }) automatedClicks: number;
  @ApiProperty({ description: 'uniqueOpens / delivered (sent when no delivery is reported), 0..1' })
  openRate: number;
  @ApiProperty({ description: 'uniqueClicks / delivered (sent when no delivery is reported), 0..1' })
  clickThroughRate: number;
  @ApiProperty({ type: [TopLink], description: 'Most clicked links first (at most 10)' }) topLinks: TopLink[];
  @ApiProperty({ type: [TimelineEntry] }) timeline: TimelineEntry[];
}

export class RecipientView {
  @ApiProperty() contactId: string;
  @ApiProperty({ type: [String], description: 'Event types the person had, in the order first seen' })
  events: string[];
  @ApiProperty({ type: String, nullable: true, description: 'Type of the last recorded event' })
  lastEvent: string | null;
  @ApiProperty({ type: Date, nullable: true }) lastEventAt: Date | null;
}

export class ContactEventView {
  @ApiProperty() _id: string;
  @ApiProperty({ type: String, nullable: true }) campaignId: string | null;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  @ApiProperty({ enum: EMAIL_EVENT_TYPES }) type: string;
  @ApiProperty() createdAt: Date;
}

export class ContactAnalyticsView {
  @ApiProperty() contactId: string;
  @ApiProperty() totalSent: number;
  @ApiProperty({ description: 'Human opens' }) totalOpened: number;
  @ApiProperty({ description: 'Human clicks' }) totalClicked: number;
  @ApiProperty() totalBounced: number;
  @ApiProperty() totalComplained: number;
  @ApiProperty() totalAutomatedOpens: number;
  @ApiProperty({ type: [ContactEventView], description: 'One page of the latest 500 events, newest first' })
  events: ContactEventView[];
}

export class OverviewTimelineEntry {
  @ApiProperty({ example: '2026-11-23' }) date: string;
  @ApiProperty() sent: number;
  @ApiProperty() delivered: number;
  @ApiProperty({ description: 'Human opens' }) opened: number;
  @ApiProperty({ description: 'Human clicks' }) clicked: number;
}

/** One stream's totals over the range. */
export class StreamTotals {
  @ApiProperty() sent: number;
  @ApiProperty() delivered: number;
  @ApiProperty({ description: 'Human opens' }) opened: number;
  @ApiProperty({ description: 'Human clicks' }) clicked: number;
  @ApiProperty() bounced: number;
  @ApiProperty() complained: number;
  @ApiProperty() unsubscribed: number;
}

export class TotalsByStream {
  @ApiProperty({ type: StreamTotals }) transactional: StreamTotals;
  @ApiProperty({ type: StreamTotals }) broadcast: StreamTotals;
}

export class OverviewView {
  @ApiProperty({ example: '2026-10-25' }) from: string;
  @ApiProperty({ example: '2026-11-23' }) to: string;
  @ApiProperty({
    enum: EMAIL_STREAMS,
    nullable: true,
    description: 'The stream the figures are of (the `stream` asked for); null: all mail',
  })
  stream: EmailStream | null;
  @ApiProperty() totalSent: number;
  @ApiProperty() totalDelivered: number;
  @ApiProperty() totalOpened: number;
  @ApiProperty({ description: 'First human open of a campaign by a person, summed over the days' })
  totalUniqueOpens: number;
  @ApiProperty() totalClicked: number;
  @ApiProperty() totalUniqueClicks: number;
  @ApiProperty() totalBounced: number;
  @ApiProperty() totalComplained: number;
  @ApiProperty() totalUnsubscribed: number;
  @ApiProperty() totalAutomatedOpens: number;
  @ApiProperty() openRate: number;
  @ApiProperty() clickThroughRate: number;
  @ApiProperty({ description: 'bounced / sent, 0..1' }) bounceRate: number;
  @ApiProperty({ description: 'complained / delivered (sent when no delivery is reported), 0..1' })
  complaintRate: number;
  @ApiProperty({ type: [OverviewTimelineEntry] }) timeline: OverviewTimelineEntry[];
  @ApiProperty({
    type: TotalsByStream,
    description:
      'The range’s totals of each stream (from the same daily counters). Events recorded before streams ' +
      'were kept on events count in the totals above, in no stream',
  })
  byStream: TotalsByStream;
}

/**
 * The dates the OpenAPI document promises to take: `YYYY-MM-DD`, optionally with a time and an offset. The
 * validator (ISO 8601, strict) takes these when they name a real day, and the other ISO 8601 spellings too.
 */
export const ISO_DATE_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}' +
  '(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?$';

/** The longest range the overview reads (one counter document per day). */
export const OVERVIEW_MAX_DAYS = 366;

export class OverviewQuery {
  @ApiPropertyOptional({
    description: 'First day (UTC, ISO 8601 date or date-time); default 29 days before `to`',
    pattern: ISO_DATE_PATTERN,
    maxLength: 40,
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date' })
  @MaxLength(40)
  from?: string;

  @ApiPropertyOptional({
    description: 'Last day (UTC, ISO 8601 date or date-time), included; default today',
    pattern: ISO_DATE_PATTERN,
    maxLength: 40,
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date' })
  @MaxLength(40)
  to?: string;

  @ApiPropertyOptional({
    description: 'Only this app (default: every app)',
    pattern: '^[a-z0-9][a-z0-9-]*$',
    maxLength: 100,
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z0-9][a-z0-9-]*$/, { message: 'appId must be an app id' })
  appId?: string;

  @ApiPropertyOptional({
    enum: EMAIL_STREAMS,
    description: 'Only this stream’s mail: every figure and the timeline (default: all mail)',
  })
  @IsOptional()
  @IsIn(EMAIL_STREAMS, { message: `stream must be one of: ${EMAIL_STREAMS.join(', ')}` })
  stream?: EmailStream;
}
