import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module';
import { bootLogger } from '../common/logging/log-stream';
import { ServiceLogger } from '../common/logging/service-logger';
import { CampaignCountersRebuild } from '../email/events/campaign-counters-rebuild';

const USAGE = 'Usage: npm run analytics:rebuild -- --campaign <campaignId>';

/** The campaign id after `--campaign` (or `--campaign=<id>`): 24 hex digits, else undefined. */
function campaignArgument(args: string[]): string | undefined {
  const index = args.findIndex((arg) => arg === '--campaign' || arg.startsWith('--campaign='));
  if (index < 0) return undefined;
  const value = args[index].includes('=') ? args[index].slice('--campaign='.length) : args[index + 1];
  return value && /^[0-9a-f]{24}$/i.test(value) ? value.toLowerCase() : undefined;
}

/**
 * `npm run analytics:rebuild -- --campaign <id>`: rebuilds one campaign's analytics counters from its stored
 * events (CampaignCountersRebuild) against the database of `MONGODB_URI`, prints what it wrote and exits.
 * No worker runs in this process.
 */
async function main(): Promise<void> {
  const campaignId = campaignArgument(process.argv.slice(2));
  if (!campaignId) {
    process.stderr.write(`${USAGE}\n(the campaign id is the 24 hex digits of its _id)\n`);
    process.exit(2);
  }
  process.env.EMAIL_WORKER_ENABLED = 'false';
  process.env.CHAT_WORKER_ENABLED = 'false';
  const root = await AppModule.forRoot({ embedded: false });
  if (!process.env.MONGODB_URI) throw new Error('MONGODB_URI is not set: the rebuild needs the database');
  const app = await NestFactory.createApplicationContext(root, { logger: bootLogger(), abortOnError: false });
  app.useLogger(app.get(ServiceLogger));
  try {
    const report = await app.get(CampaignCountersRebuild).rebuild(campaignId);
    process.stdout.write(
      `Rebuilt the analytics counters of campaign ${report.campaignId} from ${report.events} event(s): ` +
        `${report.recipients} recipient(s), ${report.uniqueFlags} unique open/click flag(s)\n` +
        `totals ${JSON.stringify(report.totals)}\n`,
    );
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  bootLogger().fatal(error instanceof Error ? error.message : String(error), 'AnalyticsRebuild');
  process.exit(1);
});
