import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { MongoServerError } from 'mongodb';
import type { Connection } from 'mongoose';
import { AppModule } from '../app.module';
import { bootLogger } from '../common/logging/log-stream';
import type { AppConfig } from '../config/env';
import { serverWatch } from '../database/index-builds';
import {
  applyPlan,
  type CollectionPlan,
  describeIndex,
  describeKey,
  type IndexConflict,
  planIndexes,
} from '../database/index-plan';
import { pendingMigrations, runMigration } from '../database/migrations/data-migration';
import { dataMigrations } from '../database/migrations';

const USAGE = 'Usage: npm run db:indexes -- [--dry-run] [--drop-extra]';
/**
 * MongoDB's IndexOptionsConflict and IndexKeySpecsConflict: an index of that key or name exists, otherwise.
 */
const CONFLICT_CODES = new Set([85, 86]);

const out = (line: string) => process.stdout.write(`${line}\n`);

function printPlan(plan: CollectionPlan, dropExtra: boolean): void {
  if (!plan.missing.length && !plan.extra.length && !plan.conflicts.length) return;
  out(`${plan.collection}:`);
  for (const index of plan.missing) out(`  + missing   ${describeIndex(index)}`);
  for (const index of plan.extra) {
    out(`  - extra     ${describeIndex(index)}${dropExtra ? '' : ' (kept; --drop-extra drops it)'}`);
  }
  for (const conflict of plan.conflicts) {
    out(
      `  ! conflict  ${conflict.name} ${describeKey(conflict.key)}: ` +
        `declared ${JSON.stringify(conflict.declared)}, existing ${JSON.stringify(conflict.existing)}`,
    );
  }
}

function conflictAdvice(conflict: IndexConflict): string {
  return (
    `Conflicting index ${conflict.collection}.${conflict.name} ${describeKey(conflict.key)}: the schema ` +
    `declares ${JSON.stringify(conflict.declared)}, the database has ${JSON.stringify(conflict.existing)}. ` +
    `Drop it (db.${conflict.collection}.dropIndex("${conflict.name}")) in a maintenance window, then run ` +
    'npm run db:indexes again to build the declared one.'
  );
}

const DAY_MS = 86_400_000;

/**
 * `npm run db:indexes`: compares every model's declared indexes with the database of `MONGODB_URI`, prints
 * the difference, then creates what is missing (and drops what no schema declares only with --drop-extra),
 * then runs the data migrations not finished yet. `--dry-run` prints the difference and the pending
 * migrations only. Exits 1 when an index has the declared keys but other options, which MongoDB will not
 * change in place. Production builds its indexes this way, not at start-up. A build may take hours: the
 * command has no socket timeout, prints the server's progress, and a run stopped half-way can be started
 * again (it waits for a build already under way; migrations resume where they were).
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--dry-run' && arg !== '--drop-extra');
  if (unknown.length) {
    process.stderr.write(`Unknown argument ${unknown[0]}. ${USAGE}\n`);
    return 2;
  }
  const dryRun = args.includes('--dry-run');
  const dropExtra = args.includes('--drop-extra');
  process.env.EMAIL_WORKER_ENABLED = 'false';
  process.env.CHAT_WORKER_ENABLED = 'false';
  // The command reads and builds the indexes itself: nothing is built behind its back when models register.
  const root = await AppModule.forRoot({ embedded: false, autoIndex: false, longCommands: true });
  if (!process.env.MONGODB_URI) throw new Error('MONGODB_URI is not set: db:indexes needs the database');
  const app = await NestFactory.createApplicationContext(root, { logger: bootLogger(), abortOnError: false });
  try {
    const connection = app.get<Connection>(getConnectionToken());
    const config = app.get<ConfigService<AppConfig, true>>(ConfigService);
    const migrations = await pendingMigrations(
      connection.db!,
      dataMigrations({
        emailEventRetentionMs: config.get('EMAIL_EVENTS_RETENTION_DAYS', { infer: true }) * DAY_MS,
      }),
    );
    const plans = await planIndexes(connection);
    const conflicts = plans.flatMap((plan) => plan.conflicts);
    const changes = plans.reduce(
      (sum, plan) => sum + plan.missing.length + (dropExtra ? plan.extra.length : 0),
      0,
    );
    for (const plan of plans) printPlan(plan, dropExtra);
    for (const migration of migrations) out(`data migration ${migration.name}: ${migration.description}`);
    if (!dryRun) {
      const watch = serverWatch(connection.db!, out);
      for (const plan of plans) {
        try {
          await applyPlan(connection, plan, dropExtra, watch);
        } catch (error) {
          if (!(error instanceof MongoServerError) || !CONFLICT_CODES.has(Number(error.code))) throw error;
          process.stderr.write(
            `Conflicting index in ${plan.collection}: ${error.message}. Drop the existing index named ` +
              'there, then run npm run db:indexes again.\n',
          );
          return 1;
        }
      }
      for (const migration of migrations) await runMigration(connection.db!, migration, out);
    }
    const verb = dryRun ? 'to apply' : 'applied';
    out(changes ? `${changes} change(s) ${verb}.` : 'Indexes match the schemas: nothing to do.');
    if (migrations.length) out(`${migrations.length} data migration(s) ${dryRun ? 'to run' : 'run'}.`);
    for (const conflict of conflicts) process.stderr.write(`${conflictAdvice(conflict)}\n`);
    return conflicts.length ? 1 : 0;
  } finally {
    await app.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    bootLogger().fatal(error instanceof Error ? error.message : String(error), 'DbIndexes');
    process.exit(1);
  },
);
