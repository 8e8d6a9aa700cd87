import {
  BadRequestException,
  createParamDecorator,
  type ExecutionContext,
  PayloadTooLargeException,
  type PipeTransform,
} from '@nestjs/common';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { createValidationPipe } from '../common/validation/validation-pipe';
import { CreateTicketDto, type CreateTicketInput, type UploadedFile } from './dto/ticket-input.dto';

/** Limits of files uploaded with a ticket (the API contract leaves them open). */
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

/** The global pipe's validation: multipart fields get the JSON body's checks and messages. */
const validation = createValidationPipe();

/** A client's file name reduced to its last path segment, without control characters, at most 255 chars. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.slice(0, 255) || 'attachment';
}

/**
 * The body of `POST /{appId}/tickets`, JSON or a multipart form, as the validated fields and the uploaded
 * files: 400 naming the field for a bad one, 413 for a file over the limit.
 */
async function readTicketForm(request: FastifyRequest): Promise<CreateTicketInput> {
  if (!request.isMultipart()) return { dto: await validate(request.body), files: [] };
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
      const file = await readFile(part, files.length);
      if (file) files.push(file);
    } else {
      readField(part, fields);
    }
  }
  return { dto: await validate(fields), files };
}

async function readFile(part: MultipartFile, count: number): Promise<UploadedFile | null> {
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

function readField(part: MultipartValue, fields: Record<string, string>): void {
  if (part.valueTruncated) throw new BadRequestException(`${part.fieldname} is too long`);
  if (Object.hasOwn(fields, part.fieldname)) {
    throw new BadRequestException(`${part.fieldname} must be given once`);
  }
  fields[part.fieldname] = String(part.value);
}

async function validate(body: unknown): Promise<CreateTicketDto> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestException('The request body must be a JSON object or a multipart form');
  }
  return (await validation.transform(body, { type: 'body', metatype: CreateTicketDto })) as CreateTicketDto;
}

/** Reads the request into a CreateTicketInput; runs after the global pipe, which leaves a request alone. */
class TicketFormPipe implements PipeTransform<FastifyRequest, Promise<CreateTicketInput>> {
  transform(request: FastifyRequest): Promise<CreateTicketInput> {
    return readTicketForm(request);
  }
}

const RawRequest = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  context.switchToHttp().getRequest<FastifyRequest>(),
);

/**
 * The ticket to create, read at the controller edge: `@TicketForm() input: CreateTicketInput` gets the
 * validated fields and the uploaded files (JSON or multipart alike), so no request reaches the services.
 */
export const TicketForm = (): ParameterDecorator => RawRequest(new TicketFormPipe());
