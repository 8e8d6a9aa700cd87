import type { CallHandler, ExecutionContext, INestApplication, NestInterceptor } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { AUDITED, operationIdOf } from './audit-actions';
import { AuditInterceptor } from './audit.interceptor';

/** Where each application's Fastify instance keeps its own AuditInterceptor. */
const APP_AUDIT_INTERCEPTOR = Symbol('auditInterceptor');

type WithAuditInterceptor = { [APP_AUDIT_INTERCEPTOR]?: AuditInterceptor };

/**
 * What the audited handlers carry as their interceptor. Handler metadata lives on the controller classes,
 * which every application in the process shares (the tests run several), so it names no instance: it
 * hands the request to the interceptor of the application that answers it. An audited route on an
 * application that never attached the trail fails rather than act unrecorded.
 */
const AUDIT_ON_ANSWERING_APP: NestInterceptor = {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const server = context.switchToHttp().getRequest<FastifyRequest>().server as WithAuditInterceptor;
    const interceptor = server[APP_AUDIT_INTERCEPTOR];
    if (!interceptor) throw new Error('An audited route ran on an application without the audit trail');
    return interceptor.intercept(context, next);
  },
};

/**
 * Puts the audit interceptor on the routes the catalogue names, and only on them. A global interceptor
 * made every request (a health check, a 404's neighbour, a client app's read) pay Nest's interceptor
 * chain, two async resources and an rxjs pipeline, to pass through
 * (docs/decisions/api-audit-on-audited-routes-only.md).
 * Called before the application's init, when Nest reads each route's interceptors.
 */
export function attachAuditTrail(app: INestApplication): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.decorate(APP_AUDIT_INTERCEPTOR, app.get(AuditInterceptor));
  const scanner = new MetadataScanner();
  for (const module of app.get(ModulesContainer).values()) {
    for (const controller of module.controllers.values()) {
      const prototype = (controller.metatype as { prototype?: object } | null)?.prototype;
      if (!prototype) continue;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[name] as object;
        const operationId = operationIdOf(handler);
        if (operationId && AUDITED[operationId]) auditHandler(handler);
      }
    }
  }
}

/** Makes the audit the handler's outermost interceptor, once however many applications attach it. */
function auditHandler(handler: object): void {
  const interceptors = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? [];
  if (interceptors.includes(AUDIT_ON_ANSWERING_APP)) return;
  Reflect.defineMetadata(INTERCEPTORS_METADATA, [AUDIT_ON_ANSWERING_APP, ...interceptors], handler);
}
