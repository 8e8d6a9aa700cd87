import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module';
import { AuditLogService } from '../audit/audit-log.service';
import { bootLogger } from '../common/logging/log-stream';
import { ServiceLogger } from '../common/logging/service-logger';

/**
 * `npm run audit:verify`: walks the audit chain of the database of `MONGODB_URI` from its oldest kept record
 * and names the first record that does not hold (exit 1), and lists actions whose outcome was never
 * recorded. docs/operations/audit-log.md.
 */
async function main(): Promise<void> {
  process.env.EMAIL_WORKER_ENABLED = 'false';
  process.env.CHAT_WORKER_ENABLED = 'false';
  const root = await AppModule.forRoot({ embedded: false });
  if (!process.env.MONGODB_URI) throw new Error('MONGODB_URI is not set: the check needs the database');
  const app = await NestFactory.createApplicationContext(root, { logger: bootLogger(), abortOnError: false });
  app.useLogger(app.get(ServiceLogger));
  try {
    const { checked, firstBreak, strayIntents } = await app.get(AuditLogService).verify();
    for (const intent of strayIntents) {
      process.stdout.write(
        `Outcome unknown: ${intent.action} by ${intent.actorId ?? 'nobody signed in'} started ` +
          `${intent.startedAt.toISOString()} (intent ${intent.id}) has no record\n`,
      );
    }
    if (firstBreak) {
      process.stdout.write(
        `Audit chain BROKEN at record seq ${firstBreak.seq} (_id ${firstBreak.id}): ${firstBreak.reason}\n` +
          `${checked - 1} record(s) before it hold.\n`,
      );
      process.exitCode = 1;
    } else {
      process.stdout.write(`Audit chain intact: ${checked} record(s) checked.\n`);
    }
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  bootLogger().fatal(error instanceof Error ? error.message : String(error), 'AuditVerify');
  process.exit(2);
});
