import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule } from '@nestjs/core';
import { getModelToken, MongooseModule } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { Model } from 'mongoose';
import { DatabaseAvailability } from '../database/database-availability';
import { JobHandlers } from './job-handlers';
import { kindRuntime, kindTokens, settingsFromConfig } from './kind-runtime';
import { leaseFields } from './lease-fields';
import { LeaseQueueStore } from './lease-queue.store';
import { PollingWorker } from './polling-worker';
import type { KindSettings, KindTypes, QueueKind } from './queue-kind';
import { QueueWorker, QueueWorkerSchema } from './schemas/queue-worker.schema';
import { WorkerHeartbeat } from './worker-heartbeat';

/** What a kind brings besides its declaration: its own store or worker (a subclass), provided by itself. */
export interface KindParts {
  /** The feature provides a subclass of `LeaseQueueStore` (its own queries, hooks) injecting the runtime. */
  ownStore?: boolean;
  /** The feature provides a subclass of `PollingWorker` (its hooks) injecting the runtime. */
  ownWorker?: boolean;
}

/**
 * The lease-queue engine: the handler registry every queue kind looks up, the process's heartbeat its
 * leases carry, and `forKind`, which registers one kind from its declaration (docs/queue.md).
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    MongooseModule.forFeature([{ name: QueueWorker.name, schema: QueueWorkerSchema }]),
  ],
  providers: [JobHandlers, WorkerHeartbeat],
  exports: [JobHandlers, WorkerHeartbeat],
})
export class QueueModule {
  /**
   * One kind, declared in one place: its collection (with the engine's lease fields and indexes), its
   * settings read from its feature's configuration, its runtime, and, unless the feature brings its own
   * (`parts`), its store and its worker (which checks the kind's handlers at boot).
   */
  static forKind<T extends KindTypes>(kind: QueueKind<T>, parts: KindParts = {}): DynamicModule {
    const tokens = kindTokens(kind);
    if (parts.ownStore && !parts.ownWorker) {
      throw new Error(`Queue "${kind.name}": a kind with its own store brings its own worker too`);
    }
    withLeaseFields(kind);
    const providers: Provider[] = [
      {
        provide: tokens.options,
        inject: [ConfigService],
        useFactory: (config: ConfigService) => settingsFromConfig(kind, config),
      },
      {
        provide: tokens.runtime,
        inject: [
          ConfigService,
          getModelToken(kind.model.name),
          tokens.options,
          JobHandlers,
          SchedulerRegistry,
          WorkerHeartbeat,
          DatabaseAvailability,
        ],
        useFactory: (
          config: ConfigService,
          model: Model<unknown>,
          options: Partial<KindSettings>,
          handlers: JobHandlers,
          scheduler: SchedulerRegistry,
          heartbeat: WorkerHeartbeat,
          availability: DatabaseAvailability,
        ) => kindRuntime(kind, { config, model, options, handlers, scheduler, heartbeat, availability }),
      },
    ];
    if (!parts.ownStore) {
      providers.push({
        provide: tokens.store,
        inject: [tokens.runtime],
        useFactory: (runtime: ConstructorParameters<typeof LeaseQueueStore<T>>[0]) =>
          new LeaseQueueStore<T>(runtime),
      });
    }
    if (!parts.ownWorker) {
      providers.push({
        provide: tokens.worker,
        inject: [tokens.runtime, tokens.store],
        useFactory: (runtime: ConstructorParameters<typeof PollingWorker<T>>[0], store: LeaseQueueStore<T>) =>
          new PollingWorker<T>(runtime, store),
      });
    }
    return {
      module: QueueKindModule,
      imports: [MongooseModule.forFeature([{ name: kind.model.name, schema: kind.model.schema }])],
      providers,
      exports: [MongooseModule, ...providers.map((provider) => (provider as { provide: string }).provide)],
    };
  }
}

/** The module `QueueModule.forKind` makes, once per kind. */
@Module({})
export class QueueKindModule {}

const withLease = new WeakSet<object>();

/**
 * Adds the engine's lease fields and indexes to the kind's schema, once (another module may read the same
 * collection through the same schema): before any model of it is compiled.
 */
function withLeaseFields(kind: Pick<QueueKind<KindTypes>, 'model'>): void {
  if (withLease.has(kind.model.schema)) return;
  withLease.add(kind.model.schema);
  kind.model.schema.plugin(leaseFields, kind.model.lease ?? {});
}
