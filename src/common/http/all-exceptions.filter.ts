import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Error as MongooseError } from 'mongoose';
import { type DuplicateKeyError, isDuplicateKey } from '../database/duplicate-key';
import { rememberReason, requestFacts } from '../logging/access-log';
import type { ErrorBody } from './envelope';
import {
  DATABASE_RETRY_AFTER_S,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from './database-unavailable';
import { isQueryTimeout, QUERY_TIMEOUT_ANSWER, QUERY_TIMEOUT_RETRY_AFTER_S } from './query-timeout';
import { RetryLaterException } from './retry-later.exception';

interface Mapped {
  status: number;
  error: string;
}

/** Fastify's own errors (bad JSON, body too large, wrong content type) carry a status and an FST_ code. */
interface FastifyError extends Error {
  code: string;
  statusCode: number;
}

const isFastifyError = (e: unknown): e is FastifyError =>
  e instanceof Error &&
  typeof (e as FastifyError).code === 'string' &&
  (e as FastifyError).code.startsWith('FST_') &&
  typeof (e as FastifyError).statusCode === 'number';

/** nginx's "client closed request": in the access log it tells an abort from a refusal we sent. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * The client hung up before its request body was complete. Node fails the request stream with `aborted`
 * (ECONNRESET) and Fastify passes that on; nothing failed on our side and nobody is left to answer, so it
 * is not an unhandled error. Read from the request itself, so an ECONNRESET of an outgoing connection (SMTP,
 * a chat webhook) stays a 500.
 */
const isClientAbort = (exception: unknown, request: FastifyRequest | undefined): boolean =>
  request?.raw.readableAborted === true ||
  (exception instanceof Error &&
    exception.message === 'aborted' &&
    (exception as NodeJS.ErrnoException).code === 'ECONNRESET');

/** The fields of the violated unique index: from `keyPattern`, else from the index name in the message. */
/** The 409 of a write refused by a unique index over these fields (the document shows the same). */
export function duplicateRecordMessage(fields: string[]): string {
  return fields.length ? `A record with this ${fields.join(', ')} already exists` : 'Duplicate record';
}

function duplicateFields(error: Error & DuplicateKeyError): string[] {
  if (error.keyPattern) return Object.keys(error.keyPattern);
  const index = /index: (\S+)/.exec(error.message)?.[1] ?? '';
  return index.split(/_-?1(?:_|$)/).filter(Boolean);
}

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Body cannot be empty when content-type is application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported media type',
  FST_INVALID_JSON_FIELD_ERROR: 'A multipart field declared as JSON is not valid JSON',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'The request is not multipart/form-data',
};

/** @fastify/multipart answers 406 for what is a malformed request (400) or a wrong content type (415). */
const FASTIFY_STATUS: Record<string, number> = {
  FST_INVALID_JSON_FIELD_ERROR: HttpStatus.BAD_REQUEST,
  FST_INVALID_MULTIPART_CONTENT_TYPE: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
};

/**
 * Validation messages named in an error; the rest are counted, so a body of 1,000 bad fields answers briefly.
 */
const LISTED_MESSAGES = 5;

/** Several validation messages as the one `error` string of the envelope. */
export function listOf(messages: unknown[]): string {
  const listed = messages.slice(0, LISTED_MESSAGES).map(String).join('; ');
  const rest = messages.length - LISTED_MESSAGES;
  return rest > 0 ? `${listed}; and ${rest} more` : listed;
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return listOf(message);
  if (typeof message === 'string') return message;
  return exception.message;
}

/**
 * A 401 that asks for a second factor says so in a field of its own (`twoFactorRequired: true`), so a client
 * tells "ask for the code" from "wrong password" without reading the message.
 */
function signInHintOf(exception: unknown): { twoFactorRequired?: true } {
  if (!(exception instanceof HttpException)) return {};
  const response = exception.getResponse();
  return typeof response === 'object' &&
    (response as { twoFactorRequired?: unknown }).twoFactorRequired === true
    ? { twoFactorRequired: true }
    : {};
}

/**
 * Seconds for `Retry-After`: a 429 decided by the service, a database that is away or a query timeout (503).
 */
function retryAfterOf(exception: unknown): number | undefined {
  if (exception instanceof RetryLaterException) return Math.max(1, Math.ceil(exception.retryAfterSeconds));
  if (isDatabaseUnavailable(exception)) return DATABASE_RETRY_AFTER_S;
  if (isQueryTimeout(exception)) return QUERY_TIMEOUT_RETRY_AFTER_S;
  return undefined;
}

/**
 * Turns every error into `{success:false, error}`. Known errors keep their status; database errors are
 * mapped (duplicate key → 409, malformed id → 404, schema validation → 400, a database that is away or a
 * query stopped at its time limit → 503 with `Retry-After`); a client's abort is logged at
 * info (499); anything else is a 500 whose body carries only an `errorId` that is also in the log line with
 * the stack.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const { status, error } = this.map(exception, request);
    if (request) rememberReason(request, status, error);
    const body: ErrorBody = { success: false, error, ...signInHintOf(exception) };
    const retryAfter = retryAfterOf(exception);
    if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private map(exception: unknown, request: FastifyRequest): Mapped {
    if (exception instanceof HttpException) {
      return { status: exception.getStatus(), error: messageOf(exception) };
    }
    if (isFastifyError(exception) && exception.statusCode < 500) {
      return {
        status: FASTIFY_STATUS[exception.code] ?? exception.statusCode,
        error: FASTIFY_MESSAGES[exception.code] ?? exception.message,
      };
    }
    // Logged once by DatabaseAvailability when the database goes, not per request; the access log has each.
    if (isDatabaseUnavailable(exception)) {
      return { status: HttpStatus.SERVICE_UNAVAILABLE, error: DATABASE_UNAVAILABLE_MESSAGE };
    }
    if (isClientAbort(exception, request)) {
      this.logger.log({ ...(request && requestFacts(request)) }, 'Request aborted by the client');
      return { status: CLIENT_CLOSED_REQUEST, error: 'Request aborted by the client' };
    }
    if (exception instanceof Error && isDuplicateKey(exception)) {
      return { status: HttpStatus.CONFLICT, error: duplicateRecordMessage(duplicateFields(exception)) };
    }
    if (isQueryTimeout(exception)) {
      this.logger.warn({ ...(request && requestFacts(request)) }, 'A query reached its time limit');
      return QUERY_TIMEOUT_ANSWER;
    }
    if (exception instanceof MongooseError.CastError) {
      return { status: HttpStatus.NOT_FOUND, error: 'Not found' };
    }
    if (exception instanceof MongooseError.ValidationError) {
      const fields = Object.values(exception.errors).map((e) => `${e.path}: ${e.message}`);
      return { status: HttpStatus.BAD_REQUEST, error: fields.join('; ') };
    }
    const errorId = randomUUID();
    this.logger.error(
      { errorId, ...(request && requestFacts(request)), err: exception },
      `Unhandled error ${errorId}`,
    );
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, error: `Internal server error (errorId: ${errorId})` };
  }
}
