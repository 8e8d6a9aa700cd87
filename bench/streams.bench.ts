/**
 * Message streams benchmark: a magic link's latency from its HTTP request (`POST /auth/magic-link`, as a
 * client app sends it) to the message's arrival at an SMTP sink, idle and while a 10,000-person campaign
 * sends at the provider's limit, at 2 and 40 msg/s (p50/p99), with the campaign's achieved rate, the
 * server's CPU time and its database commands per link.
 *
 *   npm run bench -- streams
 *   BENCH_LINKS=20 BENCH_CAMPAIGN=10000 BENCH_RATES=2,40 BENCH_INTERVAL_MS=200 npm run bench -- streams
 *
 * Per rate, the built server (`dist/main.js`, NODE_ENV=production, its worker on its timers) on a database
 * of its own in one in-memory dev database, SMTP to a sink in this process (it timestamps each message at
 * the end of its DATA). The provider's limit is the broadcast stream's budget
 * (`EMAIL_BROADCAST_RATE_PER_SECOND`); the transactional stream gets a budget of the same size
 * (`EMAIL_TRANSACTIONAL_RATE_PER_SECOND`), `EMAIL_WORKER_CONCURRENCY=4` slots and SMTP connections per
 * stream, and the worker polls every `BENCH_INTERVAL_MS` (the production default is 1,000 ms). The
 * campaign goes through the API: 10,000 subscribers imported, a campaign created and sent. Links are asked
 * for one after another (each once the last arrived, then `BENCH_PAUSE_MS`), each from another client
 * address (X-Forwarded-For; TRUST_PROXY=loopback) and for another address, so no rate limit applies.
 *
 * CPU and commands are the server's over the links' window divided by the links: idle, that is a link's
 * request and its delivery plus the worker's polling meanwhile; during the campaign it includes the
 * campaign's sends of that window (printed per message too).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { type BenchServer, call, clientIpOf, PROJECT_ROOT, startServer } from './http-bench';
import { cpuSecondsOf } from './process-cpu';

const LINKS = Number(process.env.BENCH_LINKS ?? 20);
const CAMPAIGN = Number(process.env.BENCH_CAMPAIGN ?? 10_000);
const RATES = (process.env.BENCH_RATES ?? '2,40').split(',').map(Number);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 200);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 100);
const IMPORT_BATCH = 5_000;
const APP_ID = 'bench-shop';

/** Arrival time (end of DATA) of each link, by recipient; the campaign's arrivals, in order. */
const linkArrivals = new Map<string, number>();
const campaignArrivals: number[] = [];
const waiters = new Map<string, () => void>();

async function startSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 100,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        const at = performance.now();
        for (const { address } of session.envelope.rcptTo) {
          if (!address.startsWith('link-')) {
            campaignArrivals.push(at);
            continue;
          }
          linkArrivals.set(address, at);
          waiters.get(address)?.();
        }
        callback(null, 'Queued');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
let client = 0;

interface LinkRun {
  latencies: number[];
  seconds: number;
  cpuUsPerLink: number;
  commandsPerLink: number;
  campaignSent: number;
}

/** `LINKS` magic links one after another: latency from the request to the arrival at the sink. */
async function links(server: BenchServer, label: string): Promise<LinkRun> {
  const latencies: number[] = [];
  const cpuBefore = cpuSecondsOf(server.pid) ?? 0;
  const commandsBefore = await server.dbCommands();
  const campaignBefore = campaignArrivals.length;
  const started = performance.now();
  for (let i = 0; i < LINKS; i += 1) {
    const email = `link-${label}-${i}@example.com`;
    const arrived = new Promise<void>((resolve) => waiters.set(email, resolve));
    client += 1;
    const requested = performance.now();
    await call(
      server.baseUrl,
      'POST',
      '/auth/magic-link',
      { 'x-forwarded-for': clientIpOf(client) },
      {
        email,
        appId: APP_ID,
      },
    );
    await arrived;
    waiters.delete(email);
    latencies.push(linkArrivals.get(email)! - requested);
    await sleep(PAUSE_MS);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = (cpuSecondsOf(server.pid) ?? 0) - cpuBefore;
  const commands = (await server.dbCommands()) - commandsBefore;
  return {
    latencies: latencies.sort((a, b) => a - b),
    seconds,
    cpuUsPerLink: (cpu * 1e6) / LINKS,
    commandsPerLink: commands / LINKS,
    campaignSent: campaignArrivals.length - campaignBefore,
  };
}

function report(label: string, run: LinkRun): void {
  const { latencies: sorted } = run;
  console.log(
    `${label.padEnd(30)} p50 ${percentile(sorted, 50).toFixed(0).padStart(5)} ms   p99 ` +
      `${percentile(sorted, 99).toFixed(0).padStart(5)} ms   max ${sorted.at(-1)!.toFixed(0).padStart(5)} ms   ` +
      `server CPU ${Math.round(run.cpuUsPerLink).toLocaleString('en')} µs/link   ` +
      `db commands ${run.commandsPerLink.toFixed(1)}/link`,
  );
}

/** 10,000 subscribers through the import endpoint, then a campaign to them, sent. */
async function startCampaign(server: BenchServer): Promise<void> {
  for (let from = 0; from < CAMPAIGN; from += IMPORT_BATCH) {
    const subscribers = Array.from({ length: Math.min(IMPORT_BATCH, CAMPAIGN - from) }, (_, i) => ({
      email: `reader-${from + i}@bench.test`,
      firstName: 'Reader',
    }));
    await call(server.baseUrl, 'POST', `/admin/${APP_ID}/newsletter/subscribers/import`, server.admin, {
      subscribers,
    });
  }
  const created = await call(server.baseUrl, 'POST', `/admin/${APP_ID}/newsletter/campaigns`, server.admin, {
    name: 'Bench campaign',
    subject: 'News for {{firstName}}',
    htmlContent: '<p>Hello {{firstName}}</p><p><a href="https://shop.example.com/new">New</a></p>',
  });
  const id = String((created.data as { _id: string })._id);
  await call(server.baseUrl, 'POST', `/admin/${APP_ID}/newsletter/campaigns/${id}/send`, server.admin, {});
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const sink = await startSink();
  console.log(
    `${LINKS} links per row, worker polling every ${INTERVAL_MS} ms, ${CAMPAIGN.toLocaleString('en')}-person ` +
      'campaign; latency from POST /auth/magic-link to the end of its DATA at the SMTP sink',
  );
  try {
    for (const rate of RATES) {
      const server = await startServer(
        join(PROJECT_ROOT, 'dist'),
        withDatabaseName(database.uri, `bench_streams_${rate}_${randomBytes(3).toString('hex')}`),
        [],
        {
          EMAIL_WORKER_ENABLED: 'true',
          EMAIL_TRANSPORT: 'smtp',
          SMTP_URL: sink.url,
          EMAIL_WORKER_INTERVAL_MS: String(INTERVAL_MS),
          EMAIL_WORKER_CONCURRENCY: '4',
          EMAIL_BROADCAST_RATE_PER_SECOND: String(rate),
          EMAIL_TRANSACTIONAL_RATE_PER_SECOND: String(rate),
          CHAT_WORKER_ENABLED: 'false',
          WORKER_SHUTDOWN_MS: '5000',
        },
      );
      try {
        await call(server.baseUrl, 'POST', '/admin/apps', server.admin, { id: APP_ID, name: 'Bench shop' });
        report(`${rate} msg/s, idle`, await links(server, `idle${rate}`));
        await startCampaign(server);
        // The campaign is under way (planned, its first sends out) before the links are asked for.
        const before = campaignArrivals.length;
        while (campaignArrivals.length < before + Math.max(4, rate)) await sleep(20);
        const firstAt = campaignArrivals.length;
        const busy = await links(server, `busy${rate}`);
        report(`${rate} msg/s, during the campaign`, busy);
        const window = campaignArrivals.slice(firstAt);
        const achieved = window.length > 1 ? (window.length - 1) / ((window.at(-1)! - window[0]) / 1000) : 0;
        const messages = LINKS + busy.campaignSent;
        console.log(
          `${''.padEnd(30)} campaign: ${busy.campaignSent} sent in the links' ${busy.seconds.toFixed(1)} s, ` +
            `achieved ${achieved.toFixed(2)} msg/s (budget ${rate}); server CPU ` +
            `${Math.round((busy.cpuUsPerLink * LINKS) / messages).toLocaleString('en')} µs and ` +
            `${((busy.commandsPerLink * LINKS) / messages).toFixed(1)} db commands per message sent`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    await sink.close();
    await database.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
