import { Global, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type PathItem = OpenAPIObject['paths'][string];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on direct routes (below). */
    direct?: boolean;
  }
}

/** What a route answered by Fastify directly declares: its path, handler and OpenAPI description. */
export interface DirectRoute {
  /** Fastify's pattern, e.g. `/o/:token`. */
  url: string;
  /** The same path as OpenAPI writes it, e.g. `/o/{token}`. */
  openApiPath: string;
  /** The GET operation of /docs-json (HEAD is answered too). */
  openApi: NonNullable<PathItem['get']>;
  /** Synchronous on purpose: a direct route does no I/O while the client waits. */
  handler: (request: FastifyRequest, reply: FastifyReply) => void;
}

/** The route config that marks a direct route: the security-header hook and CORS leave its headers alone. */
const DIRECT_ROUTE_CONFIG = { direct: true, cors: false } as const;

/** Whether the request was routed to a direct route (its own headers, no CORS). */
export function isDirectRoute(request: FastifyRequest): boolean {
  return request.routeOptions.config?.direct === true;
}

/**
 * Public GET routes that Fastify answers without Nest's router, guards, pipes and interceptors: only for hot
 * answers that are the same for everyone and need none of them (the open pixel, fetched once per opened
 * mail, by mail-privacy proxies in bursts). Fastify's hooks still run, so such a route still gets its
 * request id, access line and edge errors; it sets its own response headers. The routes are listed in
 * /docs-json like every other (`documentation()`, merged by the OpenAPI set-up).
 *
 * Routes are declared from their owners' constructors (`add`), so the OpenAPI document, built before the
 * application's init, lists them; they are put on the Fastify instance at init, before it listens. In a
 * process without an HTTP server (the worker) they are not served.
 */
@Injectable()
export class DirectRoutes implements OnModuleInit {
  private readonly routes: DirectRoute[] = [];

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  add(route: DirectRoute): void {
    this.routes.push(route);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    for (const route of this.routes) {
      fastify.get(route.url, { config: DIRECT_ROUTE_CONFIG }, route.handler);
    }
  }

  /** The OpenAPI paths of the registered routes. */
  documentation(): Record<string, PathItem> {
    return Object.fromEntries(this.routes.map((route) => [route.openApiPath, { get: route.openApi }]));
  }
}

@Global()
@Module({ providers: [DirectRoutes], exports: [DirectRoutes] })
export class DirectRoutesModule {}
