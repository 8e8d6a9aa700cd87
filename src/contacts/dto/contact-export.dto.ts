import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RecipientEmail } from '../../email/jobs/recipient-jobs.service';
import type { ExportedEmailEvent } from '../../email/tracking/contact-email-events';
import type { Contact } from '../schemas/contact.schema';
import {
  EMAIL_JOB_STATUSES,
  EMAIL_JOB_TYPES,
  type EmailJobStatus,
  type EmailJobType,
} from '../../email/jobs/schemas/email-job.schema';
import { ContactDetailView, toContactDetailView } from './contact.dto';

/** What the service gathers for an export, before it is shaped for the response. */
export interface ContactExportData {
  contact: Contact;
  emails: RecipientEmail[];
  events: ExportedEmailEvent[];
}

export class ExportedEmailTemplate {
  @ApiProperty() name: string;
  @ApiPropertyOptional() language?: string;
}

/** An e-mail addressed to the person: what and when, without the content. */
export class ExportedEmail {
  @ApiProperty() _id: string;
  @ApiProperty({ enum: EMAIL_JOB_TYPES }) type: EmailJobType;
  @ApiProperty({ enum: EMAIL_JOB_STATUSES }) status: EmailJobStatus;
  @ApiProperty({ type: String, nullable: true }) appId: string | null;
  @ApiProperty({ type: String, nullable: true }) campaignId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Subject of a literal message' })
  subject: string | null;
  @ApiProperty({ type: ExportedEmailTemplate, nullable: true, description: 'Template of a templated one' })
  template: ExportedEmailTemplate | null;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) scheduledAt: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: Date | null;
}

/** An e-mail event recorded for the person (an open, a click, …). */
export class ExportedEvent {
  @ApiProperty() type: string;
  @ApiProperty({ description: '`tracking`, or the provider that reported it' }) provider: string;
  @ApiProperty({ type: String, nullable: true }) appId: string | null;
  @ApiProperty({ type: String, nullable: true }) campaignId: string | null;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The link of a click' }) url: string | null;
  @ApiProperty({ type: String, nullable: true }) userAgent: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

/** Everything the service holds about one person (GDPR data export). */
export class ContactExport {
  @ApiProperty({ format: 'date-time' }) exportedAt: Date;
  @ApiProperty({ type: ContactDetailView, description: 'The record, consent history and subscriptions' })
  contact: ContactDetailView;
  @ApiProperty({ type: [ExportedEmail], description: 'E-mails addressed to the person, oldest first' })
  emails: ExportedEmail[];
  @ApiProperty({ type: [ExportedEvent], description: 'E-mail events recorded for the person, newest first' })
  events: ExportedEvent[];
}

export function toContactExport(data: ContactExportData, exportedAt = new Date()): ContactExport {
  return { exportedAt, contact: toContactDetailView(data.contact), emails: data.emails, events: data.events };
}
