import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RecipientEmail } from '../../email/jobs/recipient-jobs.service';
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

/** Everything the service holds about one person (GDPR data export). */
export class ContactExport {
  @ApiProperty({ format: 'date-time' }) exportedAt: Date;
  @ApiProperty({ type: ContactDetailView, description: 'The record, consent history and subscriptions' })
  contact: ContactDetailView;
  @ApiProperty({ type: [ExportedEmail], description: 'E-mails addressed to the person, oldest first' })
  emails: ExportedEmail[];
}

export function toContactExport(data: ContactExportData, exportedAt = new Date()): ContactExport {
  return { exportedAt, contact: toContactDetailView(data.contact), emails: data.emails };
}
