import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module';
import { bootLogger } from '../common/logging/log-stream';
import { ServiceLogger } from '../common/logging/service-logger';
import { type DemoReport, seedDemo } from '../demo/demo-seed';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Demo people, keys and a known admin password have no place in a production database. */
function refuseInProduction(): void {
  if (process.env.NODE_ENV !== 'production') return;
  process.stderr.write('seed:demo refuses to run with NODE_ENV=production: demo data is for development\n');
  process.exit(1);
}

function printReport(report: DemoReport): void {
  const { admin, apps, campaign, added } = report;
  out(
    `Sign in as ${admin.email}${admin.password ? ` with the password ${admin.password} (shown once)` : ''}`,
  );
  for (const app of apps) {
    out(`App ${app.appId}: publishable key ${app.publicKey}`);
    out(`  API key ${app.keyId}: ${app.apiKey}`);
  }
  out(
    `Campaign ${campaign.id} (${apps[0].appId}): ${campaign.status} to ${campaign.recipients} subscriber(s), ` +
      `${campaign.eventsAdded} engagement event(s) added`,
  );
  const total = Object.values(added).reduce((sum, count) => sum + count, 0);
  out(
    total
      ? `Added ${added.subscribers} subscriber(s), ${added.tickets} ticket(s), ${added.wants} want(s) with ` +
          `${added.votes} vote(s), ${added.feedback} feedback item(s).`
      : 'The demo was complete already: nothing added.',
  );
}

/**
 * `npm run seed:demo`: fills the database (the embedded dev database without MONGODB_URI) with the demo
 * of docs/demo-data.md and prints how to sign in and the keys it made. Running it again adds only what is
 * missing. The e-mail worker runs in this process only to send the demo campaign.
 */
async function main(): Promise<void> {
  refuseInProduction();
  process.env.EMAIL_WORKER_ENABLED = 'false';
  process.env.CHAT_WORKER_ENABLED = 'false';
  const root = await AppModule.forRoot();
  // `.env` is loaded now: it may be the one that says production.
  refuseInProduction();
  const app = await NestFactory.createApplicationContext(root, { logger: bootLogger(), abortOnError: false });
  app.useLogger(app.get(ServiceLogger));
  try {
    printReport(await seedDemo(app));
  } finally {
    await app.close();
  }
}

// An explicit exit: the embedded database's process, a child of this one, would otherwise keep it alive.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    bootLogger().fatal(error instanceof Error ? error.message : String(error), 'SeedDemo');
    process.exit(1);
  },
);
