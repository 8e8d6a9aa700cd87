import { Inject, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/env';
import { STORAGE_DRIVER, type StorageDriver, type StoredObject } from '../common/storage/storage-driver';
import type { UploadedFile } from './dto/ticket-input.dto';
import type { TicketAttachment } from './schemas/ticket.schema';

const ATTACHMENT_KEY = /^[a-f\d]{32}$/;

export interface AttachmentDownload {
  file: StoredObject;
  filename: string;
  mimetype: string;
}

/** `Content-Disposition: attachment` with an ASCII fallback and the UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const objectKey = (appId: string, ticketId: string, key: string) => `tickets/${appId}/${ticketId}/${key}`;

/** Keeps the files uploaded with tickets in the storage driver (the form is read by ticket-form.ts). */
@Injectable()
export class TicketAttachmentsService {
  private readonly logger = new Logger(TicketAttachmentsService.name);

  constructor(
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  /** Stores the files of a new ticket; if one fails, the ones already stored are removed. */
  async store(appId: string, ticketId: string, files: UploadedFile[]): Promise<TicketAttachment[]> {
    const stored: TicketAttachment[] = [];
    try {
      for (const file of files) {
        const key = randomBytes(16).toString('hex');
        await this.storage.put(objectKey(appId, ticketId, key), file.data, file.mimetype);
        stored.push({
          url: `${this.config.get('publicBaseUrl', { infer: true })}/${appId}/tickets/${ticketId}/attachments/${key}`,
          key,
          filename: file.filename,
          mimetype: file.mimetype,
          size: file.data.length,
          uploadedAt: new Date(),
        });
      }
    } catch (error) {
      await this.remove(appId, ticketId, stored);
      throw error;
    }
    return stored;
  }

  /** Best effort: a file that cannot be deleted is logged, not reported to the caller. */
  async remove(appId: string, ticketId: string, attachments: readonly TicketAttachment[]): Promise<void> {
    for (const { key } of attachments) {
      if (!key) continue;
      try {
        await this.storage.delete(objectKey(appId, ticketId, key));
      } catch (error) {
        this.logger.warn({ err: error, appId, ticketId, key }, 'Could not delete a ticket attachment file');
      }
    }
  }

  /** The stored file of an attachment the ticket lists; 404 otherwise. */
  async open(
    appId: string,
    ticketId: string,
    key: string,
    attachments: readonly TicketAttachment[],
  ): Promise<AttachmentDownload> {
    const attachment = ATTACHMENT_KEY.test(key) ? attachments.find((a) => a.key === key) : undefined;
    const file = attachment ? await this.storage.get(objectKey(appId, ticketId, key)) : null;
    if (!attachment || !file) throw new NotFoundException('Attachment not found');
    return { file, filename: attachment.filename, mimetype: attachment.mimetype };
  }
}
