import {
  BadRequestException,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { Env } from '../config/env';
import { STORAGE_DRIVER, type StorageDriver, type StoredObject } from '../common/storage/storage-driver';
import { createValidationPipe } from '../common/validation/validation-pipe';
import { CreateTicketDto } from './dto/ticket-input.dto';
import type { TicketAttachment } from './schemas/ticket.schema';

/** Limits of files uploaded with a ticket (the spec leaves them open). */
export const UPLOAD_LIMITS = {
  maxFiles: 5,
  maxFileBytes: 5 * 1024 * 1024,
  maxFields: 10,
  maxFieldBytes: 64 * 1024,
};

/** No SVG or HTML: files a browser could run as script are refused even though downloads are attachments. */
export const ALLOWED_MIME_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
] as const;

const ATTACHMENT_KEY = /^[a-f\d]{32}$/;

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

export interface CreateTicketInput {
  dto: CreateTicketDto;
  files: UploadedFile[];
}

export interface AttachmentDownload {
  file: StoredObject;
  filename: string;
  mimetype: string;
}

/** The global pipe's validation: multipart fields get the JSON body's checks and messages. */
const validation = createValidationPipe();

/** A client's file name reduced to its last path segment, without control characters, at most 255 chars. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.slice(0, 255) || 'attachment';
}

/** `Content-Disposition: attachment` with an ASCII fallback and the UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const objectKey = (appId: string, ticketId: string, key: string) => `tickets/${appId}/${ticketId}/${key}`;

/** Reads ticket creation requests (JSON or multipart) and keeps the files in the storage driver. */
@Injectable()
export class TicketAttachmentsService {
  private readonly logger = new Logger(TicketAttachmentsService.name);

  constructor(
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly env: Env,
  ) {}

  /** The validated fields and the files of `POST /{appId}/tickets`; 400 naming fields, 413 for a big file. */
  async readCreateRequest(request: FastifyRequest): Promise<CreateTicketInput> {
    if (!request.isMultipart()) return { dto: await this.validate(request.body), files: [] };
    const fields: Record<string, string> = {};
    const files: UploadedFile[] = [];
    const parts = request.parts({
      limits: {
        // One more than allowed, so the extra file reaches us and is answered 400 with a clear message.
        files: UPLOAD_LIMITS.maxFiles + 1,
        fileSize: UPLOAD_LIMITS.maxFileBytes,
        fields: UPLOAD_LIMITS.maxFields,
        fieldSize: UPLOAD_LIMITS.maxFieldBytes,
      },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        const file = await this.readFile(part, files.length);
        if (file) files.push(file);
      } else {
        this.readField(part, fields);
      }
    }
    return { dto: await this.validate(fields), files };
  }

  private async readFile(part: MultipartFile, count: number): Promise<UploadedFile | null> {
    // A form's empty file input arrives as a part without a name or content.
    if (!part.filename) {
      part.file.resume();
      return null;
    }
    if (count >= UPLOAD_LIMITS.maxFiles) {
      part.file.resume();
      throw new BadRequestException(`files: at most ${UPLOAD_LIMITS.maxFiles} files may be attached`);
    }
    if (!(ALLOWED_MIME_TYPES as readonly string[]).includes(part.mimetype)) {
      part.file.resume();
      throw new BadRequestException(
        `files: ${safeFilename(part.filename)} has type ${part.mimetype}; allowed: ${ALLOWED_MIME_TYPES.join(', ')}`,
      );
    }
    let data: Buffer;
    try {
      data = await part.toBuffer();
    } catch (error) {
      if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new PayloadTooLargeException(
          `files: ${safeFilename(part.filename)} is larger than ${UPLOAD_LIMITS.maxFileBytes / 1024 / 1024} MiB`,
        );
      }
      throw error;
    }
    if (data.length === 0) throw new BadRequestException(`files: ${safeFilename(part.filename)} is empty`);
    return { filename: safeFilename(part.filename), mimetype: part.mimetype, data };
  }

  private readField(part: MultipartValue, fields: Record<string, string>): void {
    if (part.valueTruncated) throw new BadRequestException(`${part.fieldname} is too long`);
    if (Object.hasOwn(fields, part.fieldname)) {
      throw new BadRequestException(`${part.fieldname} must be given once`);
    }
    fields[part.fieldname] = String(part.value);
  }

  private async validate(body: unknown): Promise<CreateTicketDto> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadRequestException('The request body must be a JSON object or a multipart form');
    }
    return (await validation.transform(body, { type: 'body', metatype: CreateTicketDto })) as CreateTicketDto;
  }

  /** Stores the files of a new ticket; if one fails, the ones already stored are removed. */
  async store(appId: string, ticketId: string, files: UploadedFile[]): Promise<TicketAttachment[]> {
    const stored: TicketAttachment[] = [];
    try {
      for (const file of files) {
        const key = randomBytes(16).toString('hex');
        await this.storage.put(objectKey(appId, ticketId, key), file.data, file.mimetype);
        stored.push({
          url: `${this.env.publicBaseUrl}/${appId}/tickets/${ticketId}/attachments/${key}`,
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
