import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  HttpStatus,
  Injectable,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import type { FastifyRequest } from 'fastify';
import { Types } from 'mongoose';
import { catchError, concatMap, from, type Observable, switchMap, throwError } from 'rxjs';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { clientIp } from '../common/http/client-ip';
import { AUDITED, type AuditSpec, operationIdOf } from './audit-actions';
import { notedAuditActor } from './audit-actor';
import { fieldNames } from './field-names';
import { type AuditEntry, AuditTrail } from './audit-trail.service';

type AuditedRequest = FastifyRequest & {
  user?: AuthUser;
  params?: Record<string, string | undefined>;
};

/** The status an error will be answered with (the exception filter's mapping, as far as it matters here). */
const statusOf = (error: unknown) =>
  error instanceof HttpException ? error.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;

/** The status Nest will answer a success with (set on the reply only after the interceptors). */
const successStatus = (handler: object, method: string) =>
  (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ??
  (method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);

/** The id a create answered (`{data: {_id}}`, or the user of a sign-in). */
function answeredId(result: unknown): string | undefined {
  const body = result as { data?: { _id?: unknown; id?: unknown }; user?: { id?: unknown } } | undefined;
  const id = body?.data?._id ?? body?.data?.id ?? body?.user?.id;
  if (typeof id === 'string') return id;
  // An ObjectId (a lean create result): its hex string.
  return id instanceof Types.ObjectId ? id.toHexString() : undefined;
}

/**
 * Writes the audit record of every route the catalogue names (audit-actions.ts): the intent before the
 * handler runs (no intent, no action), the chained record after it, whatever the outcome. When the record
 * cannot be written the request fails (503 or 500) even if the action was carried out: it is not reported
 * as done, and its intent stays for audit:verify to list
 * (docs/decisions/security-audit-write-ahead-intent.md).
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly logger = new Logger(AuditInterceptor.name);
  private readonly specs = new WeakMap<object, AuditSpec | null>();

  constructor(private readonly trail: AuditTrail) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = context.getType() === 'http' ? this.specOf(context.getHandler()) : null;
    if (!spec) return next.handle();
    const request = context.switchToHttp().getRequest<AuditedRequest>();
    const handler = context.getHandler();
    const params = request.params ?? {};
    const start = {
      action: spec.action,
      actorId: request.user?.id,
      targetId: params[spec.idParam ?? 'id'],
      requestId: String(request.id),
    };
    return from(this.trail.begin(start)).pipe(
      switchMap((intent) =>
        next.handle().pipe(
          concatMap(async (result: unknown) => {
            const status = successStatus(handler, request.method);
            await this.trail.finish(intent, this.entry(request, spec, 'done', status, result));
            return result;
          }),
          catchError((error: unknown) => {
            const entry = this.entry(request, spec, 'failed', statusOf(error));
            return from(
              this.trail.finish(intent, entry).catch((auditError: Error) => {
                this.logger.error(
                  `Audit record of a failed ${spec.action} not written: ${auditError.message}`,
                );
              }),
            ).pipe(switchMap(() => throwError(() => error)));
          }),
        ),
      ),
    );
  }

  private entry(
    request: AuditedRequest,
    spec: AuditSpec,
    outcome: AuditEntry['outcome'],
    status: number,
    result?: unknown,
  ): AuditEntry {
    const actor = request.user ?? notedAuditActor(request);
    const params = request.params ?? {};
    return {
      actorId: actor?.id,
      actorEmail: actor?.email,
      role: actor?.role,
      action: spec.action,
      targetType: spec.target,
      targetId: params[spec.idParam ?? 'id'] ?? (outcome === 'done' ? answeredId(result) : undefined),
      appId: params[spec.appParam ?? 'appId'],
      ip: clientIp(request),
      requestId: String(request.id),
      fields: fieldNames(request.body),
      outcome,
      status,
    };
  }

  private specOf(handler: object): AuditSpec | null {
    let spec = this.specs.get(handler);
    if (spec === undefined) {
      const operationId = operationIdOf(handler);
      spec = (operationId && AUDITED[operationId]) || null;
      this.specs.set(handler, spec);
    }
    return spec;
  }
}
