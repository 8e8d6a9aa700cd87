import type { ModuleMetadata } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { getConnectionToken } from '@nestjs/mongoose';
import { Connection } from 'mongoose';
import { AppModule } from '../../src/app.module';
import { configureApp, createFastifyAdapter } from '../../src/app.setup';
import { indexesReady } from '../../src/database/indexes-ready';
import { inApplicationScope } from '../query-shapes/query-shape-recorder';
import { HttpClient } from './http';

export interface TestApp {
  app: NestFastifyApplication;
  http: HttpClient;
  connection: Connection;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Test-only modules mounted beside AppModule (e.g. routes that exercise one decorator). */
  imports?: ModuleMetadata['imports'];
  /** Providers replaced by a value (e.g. the e-mail worker's options with short retry delays). */
  overrides?: { provide: unknown; useValue: unknown }[];
}

/**
 * Services a test takes from the app run in the application's scope (their queries are recorded for the
 * index-coverage gate); models and the connection are the test's own handles and stay outside it.
 */
function inScope<T>(provider: T): T {
  if (typeof provider !== 'object' || provider === null || provider instanceof Connection) return provider;
  // One wrapper per method, so a method read twice is the same function (listeners can be removed again).
  const wrappers = new WeakMap<object, unknown>();
  const proxy: T & object = new Proxy(provider, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      // jest.spyOn reads the method back to return the spy: give it the spy itself.
      if (typeof value !== 'function' || jest.isMockFunction(value)) return value;
      if (!wrappers.has(value)) {
        // `this` is the provider, unless an object made with Object.create(provider) calls it.
        wrappers.set(value, function (this: unknown, ...args: unknown[]) {
          const self = this === proxy || this === undefined ? target : this;
          return inApplicationScope(() => Reflect.apply(value, self, args));
        });
      }
      return wrappers.get(value);
    },
  });
  return proxy;
}

/** Start-up, shut-down and every provider taken with `app.get` run in the application's scope. */
function scoped(app: NestFastifyApplication): NestFastifyApplication {
  const init = app.init.bind(app);
  const close = app.close.bind(app);
  const listen = app.listen.bind(app) as (...args: unknown[]) => Promise<unknown>;
  const get = app.get.bind(app) as (token: unknown, options?: unknown) => unknown;
  return Object.assign(app, {
    init: () => inApplicationScope(init),
    close: () => inApplicationScope(close),
    listen: (...args: unknown[]) => inApplicationScope(() => listen(...args)),
    get: (token: unknown, options?: unknown) => inScope(get(token, options)),
  });
}

/** The real AppModule on Fastify with the production pipeline, configured but not initialised yet. */
export function compileApp(options: TestAppOptions = {}): Promise<NestFastifyApplication> {
  return inApplicationScope(() => compileUnscoped(options)).then(scoped);
}

async function compileUnscoped(options: TestAppOptions): Promise<NestFastifyApplication> {
  const root = await AppModule.forRoot();
  const builder = Test.createTestingModule({ imports: [root, ...(options.imports ?? [])] });
  for (const { provide, useValue } of options.overrides ?? []) {
    builder.overrideProvider(provide).useValue(useValue);
  }
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(
    createFastifyAdapter(process.env.TRUST_PROXY),
    { bufferLogs: true },
  );
  await configureApp(app);
  return app;
}

/** Boots the real AppModule on Fastify with the production pipeline (guards, pipes, filters, Swagger). */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const app = await compileApp(options);
  try {
    await app.init();
  } catch (error) {
    // A refused boot (a start-up check threw) has already opened the database connection: close it, or
    // the test file's process cannot exit.
    await app.close().catch(() => undefined);
    throw error;
  }
  await app.getHttpAdapter().getInstance().ready();
  const connection = app.get<Connection>(getConnectionToken());
  await inApplicationScope(() => indexesReady(app));
  return {
    app,
    http: new HttpClient(app),
    connection,
    close: () => app.close(),
  };
}

/** Empties every collection of the test file's database (indexes stay). */
export async function resetDatabase(connection: Connection): Promise<void> {
  const collections = await connection.db!.collections();
  await Promise.all(collections.map((collection) => collection.deleteMany({})));
}
