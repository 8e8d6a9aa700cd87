import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { operationIdOf } from '../../src/audit/audit-actions';
import { AUTH_POLICY, AuthPolicy } from '../../src/common/auth/auth-policy';
import { type BodyPolicy, DEFAULT_BODY_POLICY } from '../../src/common/http/body/body-policy';

export interface RouteEntry {
  method: string;
  path: string;
  /** Undefined when the route made no decision (the guard then treats it as admin-only bearer). */
  policy?: AuthPolicy;
  /** What the route accepts as a body (`@AcceptsBody()` over the defaults). */
  body: BodyPolicy;
  /** The OpenAPI operationId (`@ApiOperation`), which names the route in the audit catalogue. */
  operationId?: string;
}

const joinPath = (...parts: (string | undefined)[]) =>
  '/' +
  parts
    .flatMap((part) => (part ?? '').split('/'))
    .filter(Boolean)
    .join('/');

/** Every route of the application with its auth policy, read from Nest's metadata (needs DiscoveryModule). */
export function routeTable(app: NestFastifyApplication): RouteEntry[] {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const reflector = app.get(Reflector);
  const routes: RouteEntry[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || !wrapper.metatype) continue;
    const controller = wrapper.metatype;
    const prefix = Reflect.getMetadata(PATH_METADATA, controller) as string | string[];
    const prototype = Object.getPrototypeOf(instance) as Record<string, (...args: unknown[]) => unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (path === undefined) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      const policy = reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [handler, controller]);
      const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
        { body?: Partial<BodyPolicy> } | undefined;
      const body = { ...DEFAULT_BODY_POLICY, ...config?.body };
      const operationId = operationIdOf(handler);
      for (const base of [prefix].flat()) {
        for (const sub of [path].flat())
          routes.push({ method, path: joinPath(base, sub), policy, body, operationId });
      }
    }
  }
  return routes;
}

/** A concrete URL for a route pattern: every `:param` becomes a placeholder value. */
export const sampleUrl = (path: string) => path.replace(/:[A-Za-z]+/g, 'sample-id');
