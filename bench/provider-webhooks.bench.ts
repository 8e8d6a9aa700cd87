/**
 * Provider webhook benchmark (issue 29): for each EMAIL_PROVIDER format, the events a second the built
 * server ingests with valid signatures (one `delivered` event per request, each for a message of its own,
 * through the whole pipeline: authentication, lookup, receipt, event and counters) with the server's CPU time
 * and database commands per event, and the CPU cost of the authentication alone per event, measured in this
 * process on the same requests.
 *
 *   npm run bench:providers            (BENCH_EVENTS=2000 for a quicker run)
 *
 * Messages are seeded as completed jobs straight into the database (as the worker leaves them, with our
 * Message-ID and the provider's id). Requests are signed before the clock starts, so the load generator
 * spends its CPU on sending only. Each server runs with NODE_ENV=production, except SES's: its SNS signing
 * certificate comes from a local HTTPS stand-in (SNS_TEST_ENDPOINT), which production refuses, so that one
 * runs with NODE_ENV=development.
 */
import autocannon from 'autocannon';
import mongoose, { type Model, Types } from 'mongoose';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import type { EmailProviderName } from '../src/email/events/email-events.config';
import { providerFormat } from '../src/email/events/providers/registry';
import type { WebhookRequest } from '../src/email/events/providers/provider-format';
import { snsEndpointRule } from '../src/email/events/providers/sns-endpoints';
import type { WebhookToken } from '../src/email/events/schemas/webhook-token.schema';
import {
  mailgunEventData,
  postmarkSamples,
  type SampleTarget,
  sendGridSamples,
  sesSamples,
} from '../test/helpers/provider-samples';
import {
  postmarkRequest,
  sendGridKeys,
  type SignedRequest,
  signMailgun,
  signSendGrid,
  signSns,
  snsNotification,
  startFakeSns,
  testCertificate,
} from '../test/helpers/provider-signing';
import { clientIpOf, costMeter, PROJECT_ROOT, startServer } from './http-bench';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
/** Authentication-only runs per format, after as many warm-up runs. */
const VERIFY_RUNS = 2_000;
const CONNECTIONS = 10;
const APP_ID = 'bench-app';
const DOMAIN = 'bench.test';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-events';

interface Format {
  name: EmailProviderName;
  env: Record<string, string>;
  /** A signed request reporting `target` as delivered. */
  request(target: SampleTarget): SignedRequest;
}

async function formats(): Promise<{ list: Format[]; dispose: () => Promise<void> }> {
  const whsec = `whsec_${randomBytes(24).toString('base64')}`;
  const resend = new Webhook(whsec);
  const sendgrid = sendGridKeys();
  const postmark = { user: 'bench', password: randomBytes(18).toString('base64url') };
  const mailgunKey = randomBytes(16).toString('hex');
  const certificate = testCertificate();
  const sns = await startFakeSns(certificate);
  const list: Format[] = [
    {
      name: 'resend',
      env: { WEBHOOK_SECRET: whsec },
      request: (target) => {
        const id = `msg_${randomUUID()}`;
        const now = new Date();
        const payload = JSON.stringify({
          type: 'email.delivered',
          created_at: now.toISOString(),
          data: { email_id: target.messageId, to: [target.to] },
        });
        return {
          payload,
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': resend.sign(id, now, payload),
          },
        };
      },
    },
    {
      name: 'ses',
      env: {
        NODE_ENV: 'development',
        SES_SNS_TOPIC_ARNS: TOPIC,
        SNS_TEST_ENDPOINT: sns.host,
        SNS_TEST_CA_FILE: certificate.certFile,
      },
      request: (target) =>
        signSns(
          snsNotification(TOPIC, sesSamples(target).delivery),
          certificate.key,
          sns.certificateUrl,
          '2',
        ),
    },
    {
      name: 'sendgrid',
      env: { SENDGRID_WEBHOOK_PUBLIC_KEY: sendgrid.publicKeyBase64 },
      request: (target) => {
        const { delivered } = sendGridSamples(target);
        return signSendGrid([{ ...delivered, sg_event_id: randomUUID() }], sendgrid.privateKey);
      },
    },
    {
      name: 'postmark',
      env: { POSTMARK_WEBHOOK_USER: postmark.user, POSTMARK_WEBHOOK_PASSWORD: postmark.password },
      request: (target) =>
        postmarkRequest(
          postmarkSamples(target, { app_message_id: target.messageId }).delivery,
          postmark.user,
          postmark.password,
        ),
    },
    {
      name: 'mailgun',
      env: { MAILGUN_WEBHOOK_SIGNING_KEY: mailgunKey },
      request: (target) =>
        signMailgun({ ...mailgunEventData(target).delivered, id: randomUUID() }, mailgunKey),
    },
  ];
  return {
    list,
    dispose: async () => {
      await sns.close();
      certificate.dispose();
    },
  };
}

/** Completed jobs as the worker leaves them: our Message-ID and the provider's own id. */
async function seedMessages(connection: mongoose.Connection, count: number): Promise<SampleTarget[]> {
  const targets: SampleTarget[] = [];
  const documents = Array.from({ length: count }, (_, i) => {
    const _id = new Types.ObjectId();
    const target = {
      messageId: `${String(_id)}@${DOMAIN}`,
      providerMessageId: randomUUID(),
      to: `reader-${i}@${DOMAIN}`,
    };
    targets.push(target);
    return {
      _id,
      type: 'email.send',
      status: 'completed',
      priority: 0,
      payload: { to: target.to },
      attempts: 1,
      maxAttempts: 5,
      idempotencyKey: `bench:${String(_id)}`,
      appId: APP_ID,
      campaignId: null,
      messageId: target.messageId,
      providerMessageId: target.providerMessageId,
      scheduledAt: new Date(),
      createdAt: new Date(),
      updatedAt: new Date(),
    };
  });
  for (let i = 0; i < documents.length; i += 5_000) {
    await connection.collection('email_jobs').insertMany(documents.slice(i, i + 5_000));
  }
  return targets;
}

/** The authentication (and reading) of one request, in this process: µs per event. */
async function verificationCost(format: Format, requests: SignedRequest[]): Promise<number> {
  const tokens = { create: () => Promise.resolve({}), deleteOne: () => ({ exec: () => Promise.resolve() }) };
  const reader = providerFormat(
    format.name,
    {
      WEBHOOK_SECRET: format.env.WEBHOOK_SECRET,
      SES_SNS_TOPIC_ARNS: format.env.SES_SNS_TOPIC_ARNS,
      SENDGRID_WEBHOOK_PUBLIC_KEY: format.env.SENDGRID_WEBHOOK_PUBLIC_KEY,
      POSTMARK_WEBHOOK_USER: format.env.POSTMARK_WEBHOOK_USER,
      POSTMARK_WEBHOOK_PASSWORD: format.env.POSTMARK_WEBHOOK_PASSWORD,
      MAILGUN_WEBHOOK_SIGNING_KEY: format.env.MAILGUN_WEBHOOK_SIGNING_KEY,
    },
    {
      // Mailgun's token claim is a database insert; here it is free, so the figure is the HMAC's alone.
      tokens: tokens as unknown as Model<WebhookToken>,
      snsEndpoints: snsEndpointRule(format.env.SNS_TEST_ENDPOINT, format.env.SNS_TEST_CA_FILE),
    },
  );
  const asRequest = (signed: SignedRequest) =>
    ({
      headers: signed.headers,
      rawBody: Buffer.from(signed.payload),
      ip: '127.0.0.1',
    }) as unknown as WebhookRequest;
  const run = async (from: number) => {
    for (let i = 0; i < VERIFY_RUNS; i++) {
      const result = await reader.receive(asRequest(requests[(from + i) % requests.length]), new Date());
      if (result.deliveries.length !== 1) throw new Error(`${format.name}: not one event`);
    }
  };
  await run(0);
  const started = process.hrtime.bigint();
  await run(VERIFY_RUNS);
  return Number(process.hrtime.bigint() - started) / 1_000 / VERIFY_RUNS;
}

async function ingestionRate(format: Format, mongoUri: string, targets: SampleTarget[]) {
  const server = await startServer(join(PROJECT_ROOT, 'dist'), mongoUri, [], {
    EMAIL_PROVIDER: format.name,
    MAIL_FROM: `Bench <news@${DOMAIN}>`,
    ...format.env,
  });
  try {
    // Signed before the clock starts, each for a message of its own; a short warm-up first.
    const warmUp = targets.slice(0, 200).map((target) => format.request(target));
    const requests = targets.slice(200).map((target) => format.request(target));
    const send = (list: SignedRequest[]) => {
      let n = 0;
      return autocannon({
        url: `${server.baseUrl}/email-events/primary-provider`,
        method: 'POST',
        connections: CONNECTIONS,
        amount: list.length,
        requests: [
          {
            setupRequest: (request) => {
              const signed = list[n % list.length];
              n += 1;
              return {
                ...request,
                body: signed.payload,
                headers: { ...request.headers, ...signed.headers, 'x-forwarded-for': clientIpOf(n) },
              };
            },
          },
        ],
      });
    };
    await send(warmUp);
    const perEvent = await costMeter(server);
    const result = await send(requests);
    const { cpuUs, commands } = await perEvent(requests.length);
    return {
      eventsPerSecond: result.requests.average,
      serverCpuMicroseconds: cpuUs ?? NaN,
      commands: commands ?? NaN,
      failures: result.non2xx + result.errors + result.timeouts,
      seconds: result.duration,
    };
  } finally {
    await server.stop();
  }
}

interface Measured {
  eventsPerSecond: number[];
  serverCpuMicroseconds: number[];
  commands: number[];
  authMicroseconds: number[];
  stored: number;
  failures: number;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * Two rounds, the second in reverse order, each format on a database of its own: this machine's load
 * drifts (other processes share its two cores), and the alternation spreads that drift over the formats.
 */
async function main(): Promise<void> {
  const database = await startDevDatabase();
  const { list, dispose } = await formats();
  const results = new Map<string, Measured>();
  try {
    for (const [round, order] of [list, [...list].reverse()].entries()) {
      for (const format of order) {
        const uri = withDatabaseName(database.uri, `bench_providers_${format.name}_${round}`);
        const connection = await mongoose.createConnection(uri).asPromise();
        const targets = await seedMessages(connection, EVENTS + 200);
        const auth = await verificationCost(
          format,
          targets.slice(0, 500).map((target) => format.request(target)),
        );
        const rate = await ingestionRate(format, uri, targets);
        const stored = await connection.collection('email_events').countDocuments({ type: 'delivered' });
        await connection.dropDatabase();
        await connection.close();
        const entry = results.get(format.name) ?? {
          eventsPerSecond: [],
          serverCpuMicroseconds: [],
          commands: [],
          authMicroseconds: [],
          stored: 0,
          failures: 0,
        };
        entry.eventsPerSecond.push(rate.eventsPerSecond);
        entry.serverCpuMicroseconds.push(rate.serverCpuMicroseconds);
        entry.commands.push(rate.commands);
        entry.authMicroseconds.push(auth);
        entry.stored += stored;
        entry.failures += rate.failures;
        results.set(format.name, entry);
        console.log(
          `round ${round + 1} ${format.name}: ${Math.round(rate.eventsPerSecond)} events/s, ` +
            `${rate.seconds.toFixed(1)} s`,
        );
      }
    }
  } finally {
    await dispose();
    await database.stop();
  }
  console.log(
    `\n${EVENTS} delivered events per format and round (2 rounds), ${CONNECTIONS} connections, one event ` +
      `per request. Authentication measured in-process over ${VERIFY_RUNS} requests (the format's check ` +
      'and read of the body; Mailgun without its token insert, SES with its certificate kept).',
  );
  console.table(
    [...results].map(([name, m]) => ({
      format: name,
      'events/s (mean of rounds)': Math.round(mean(m.eventsPerSecond)),
      'events/s per round': m.eventsPerSecond.map(Math.round).join(' / '),
      'server CPU µs/event': Math.round(mean(m.serverCpuMicroseconds)),
      'db commands/event': Number(mean(m.commands).toFixed(2)),
      'authentication µs/event': mean(m.authMicroseconds).toFixed(1),
      'stored / sent': `${m.stored} / ${2 * (EVENTS + 200)}`,
      'non-2xx': m.failures,
    })),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
