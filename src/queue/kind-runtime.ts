import { Inject } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import type { SchedulerRegistry } from '@nestjs/schedule';
import type { Collection } from 'mongodb';
import type { Model } from 'mongoose';
import type { DatabaseAvailability } from '../database/database-availability';
import type { JobHandlers } from './job-handlers';
import { JobsAdded } from './jobs-added';
import type { KindSettings, KindTypes, QueueKind } from './queue-kind';
import type { WorkerHeartbeat } from './worker-heartbeat';

/** What names a kind and its settings (any kind's declaration is one). */
type KindNaming = Pick<QueueKind<KindTypes>, 'name' | 'settings' | 'lanes'>;

/** The injection tokens of a kind's parts (`QueueModule.forKind`). */
export const kindTokens = (kind: KindNaming) => ({
  runtime: `queue.${kind.name}.runtime`,
  store: `queue.${kind.name}.store`,
  worker: `queue.${kind.name}.worker`,
  options: kind.settings.token ?? `queue.${kind.name}.options`,
});

/** Injects a kind's runtime into the constructor of its own store or worker (a subclass). */
export const InjectKind = (kind: KindNaming) => Inject(kindTokens(kind).runtime);
/** Injects the store or the worker of a kind registered without a subclass of its own. */
export const InjectKindStore = (kind: KindNaming) => Inject(kindTokens(kind).store);
export const InjectKindWorker = (kind: KindNaming) => Inject(kindTokens(kind).worker);

/** The engine's services a kind's store and worker use, and the kind's declaration and settings. */
export interface KindRuntime<T extends KindTypes> {
  kind: QueueKind<T>;
  collection(): Collection;
  /** The kind's settings now (`lane`: with that lane's slots and rate budget). */
  settings(lane?: string): KindSettings & { shutdownMs: number };
  handlers: JobHandlers;
  scheduler: SchedulerRegistry;
  heartbeat: WorkerHeartbeat;
  availability: DatabaseAvailability;
  /** The store announces jobs it added that are due now; the worker in this process runs them at once. */
  jobsAdded: JobsAdded;
}

/** What a kind's settings are unless it says otherwise. */
const ENGINE_DEFAULTS: KindSettings = {
  enabled: true,
  intervalMs: 1_000,
  concurrency: 1,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  reapEveryMs: 5_000,
  maxAttempts: 5,
  backoff: { baseMs: 30_000, maxMs: 3_600_000 },
  retentionDays: 0,
};

/** Settings read from the configuration (`docs/development.md`, "Adding a setting"), over the defaults. */
export function settingsFromConfig(
  kind: KindNaming,
  config: ConfigService,
): Partial<KindSettings> & Record<string, unknown> {
  const read: Record<string, unknown> = { ...ENGINE_DEFAULTS, ...kind.settings.defaults };
  for (const [key, variable] of Object.entries(kind.settings.env)) {
    if (key === 'lanes' || typeof variable !== 'string') continue;
    const value: unknown = config.get(variable);
    if (value !== undefined) read[key] = value;
  }
  return read;
}

/** A lane's own settings: the declaration's, then the configuration's, over the kind's. */
function laneSettings(kind: KindNaming, config: ConfigService, lane: string): Partial<KindSettings> {
  const read: Record<string, unknown> = { ...kind.lanes?.settings?.[lane] };
  for (const [key, variable] of Object.entries(kind.settings.env.lanes?.[lane] ?? {})) {
    const value: unknown = config.get(variable);
    if (value !== undefined) read[key] = value;
  }
  return read;
}

export function kindRuntime<T extends KindTypes>(
  kind: QueueKind<T>,
  deps: {
    config: ConfigService;
    model: Model<unknown>;
    options: Partial<KindSettings> & { lanes?: Record<string, Partial<KindSettings>> };
    handlers: JobHandlers;
    scheduler: SchedulerRegistry;
    heartbeat: WorkerHeartbeat;
    availability: DatabaseAvailability;
  },
): KindRuntime<T> {
  const { config, model, options } = deps;
  const base = settingsFromConfig(kind, config);
  const lanes = new Map(
    (kind.lanes?.names ?? []).map((lane) => [lane, laneSettings(kind, config, lane)] as const),
  );
  return {
    kind,
    collection: () => model.collection,
    settings: (lane) => {
      const settings = {
        ...(base as KindSettings),
        ...options,
        ...(lane ? { ...lanes.get(lane), ...options.lanes?.[lane] } : {}),
        shutdownMs: config.get<number>('WORKER_SHUTDOWN_MS') ?? 30_000,
      };
      delete (settings as { lanes?: unknown }).lanes;
      return settings;
    },
    handlers: deps.handlers,
    scheduler: deps.scheduler,
    heartbeat: deps.heartbeat,
    availability: deps.availability,
    jobsAdded: new JobsAdded(),
  };
}
