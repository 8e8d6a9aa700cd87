import { getModelToken } from '@nestjs/mongoose';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Model } from 'mongoose';
import { InvalidEnvironmentError, validateEnv } from '../src/config/env';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import {
  SNS_CERTIFICATE_FETCHES,
  SNS_ENDPOINT_RULE,
  snsEndpointRule,
} from '../src/email/events/providers/sns-endpoints';
import { EmailEvent } from '../src/email/tracking/schemas/email-event.schema';
import { type TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import {
  mailgunEventData,
  postmarkSamples,
  type SampleTarget,
  sendGridSamples,
  sesSamples,
} from './helpers/provider-samples';
import {
  type FakeSns,
  postmarkRequest,
  sendGridKeys,
  signMailgun,
  signSendGrid,
  signSns,
  snsNotification,
  type SignedRequest,
  startFakeSns,
  type TestCertificate,
  testCertificate,
} from './helpers/provider-signing';
import { useMailApp } from './helpers/mail-app';
import { type TestSmtpServer } from './helpers/smtp';

/**
 * `POST /email-events/primary-provider` in each format EMAIL_PROVIDER can name: the provider's published
 * samples, signed as the provider signs them with keys made for the test, go through the real worker's
 * messages to the same events, suppression and dedupe; forged, tampered and replayed requests are refused
 * (401) and counted by the forged-signature budget (429 after 10 from one address).
 */
const ROUTE = '/email-events/primary-provider';
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 10,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
/** Failed checks one address may make per minute before 429 (src/email/events/forged-signature-budget.ts). */
const BUDGET = 10;

const HOUR_MS = 3_600_000;

let clientCounter = 0;
/** A fresh client address per request group, so budgets do not carry over. */
const nextClient = () => `198.51.100.${(clientCounter = (clientCounter % 250) + 1)}`;

interface Override {
  provide: unknown;
  useValue: unknown;
}

interface Harness {
  t: TestApp;
  smtp: TestSmtpServer;
  appId: string;
  jobs: Model<EmailJob>;
  events: Model<EmailEvent>;
}

/** The app booted with one provider's settings, the real worker and a local SMTP server. */
function providerApp(env: () => Record<string, string>, providers: () => Override[] = () => []) {
  const h = {} as Harness;
  // Read when the app starts: the provider's settings may name a server an earlier beforeAll started.
  const mailApp = useMailApp(() => ({
    env: { MAIL_FROM: 'News <news@mail.example.com>', ...env() },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }, ...providers()],
  }));
  beforeAll(() => {
    ({ t: h.t, smtp: h.smtp } = mailApp);
    h.jobs = h.t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    h.events = h.t.app.get<Model<EmailEvent>>(getModelToken(EmailEvent.name));
  });
  beforeEach(async () => {
    h.appId = (await seedApp(h.t)).id;
  });
  return h;
}

/** Sends one message through the worker and SMTP; what its provider events will name. */
async function sendOne(h: Harness, to: string): Promise<SampleTarget & { jobId: string }> {
  const job = await h.t.app
    .get(EmailService)
    .enqueueEmail({ to, appId: h.appId, subject: 'Hi', text: 'Hello' });
  await drainEmailQueue(h.t);
  const stored = await h.jobs.findById(job.id).lean<EmailJob>().orFail().exec();
  return {
    jobId: job.id,
    messageId: stored.messageId!,
    providerMessageId: stored.providerMessageId ?? 'none',
    to,
  };
}

const post = (h: Harness, request: SignedRequest, client = nextClient()) =>
  h.t.http.request('POST', ROUTE, {
    payload: request.payload,
    headers: { ...request.headers, 'x-forwarded-for': client },
  });

const eventsOf = (h: Harness, messageId: string) =>
  h.events.find({ messageId, provider: 'primary' }).sort({ _id: 1 }).lean<EmailEvent[]>().exec();

/** Each event as `type` or `type/bounceType`, sorted (event ids follow from delivery keys, not time). */
const kinds = (events: EmailEvent[]) =>
  events.map((e) => (e.bounceType ? `${e.type}/${e.bounceType}` : e.type)).sort();
const clickOf = (events: EmailEvent[]) => events.find((e) => e.type === 'clicked');

const suppressed = (h: Harness, email: string) => h.t.app.get(SuppressionService).find(email);

/** 401 with the error envelope BUDGET times from one address, then 429: failed checks are counted. */
async function expectRefusedAndCounted(h: Harness, forged: () => SignedRequest, reason: RegExp) {
  const client = nextClient();
  for (let i = 0; i < BUDGET; i++) {
    const res = await post(h, forged(), client);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(reason) as string });
  }
  expect((await post(h, forged(), client)).status).toBe(429);
}

describe('Provider formats: configuration', () => {
  const secret = randomBytes(32).toString('hex');
  const production = {
    NODE_ENV: 'production',
    APP_SECRET: secret,
    MONGODB_URI: 'mongodb://db:27017/app',
    MAIL_FROM: 'news@mail.example.com',
    PUBLIC_BASE_URL: 'https://mail.example.com',
    SMTP_URL: 'smtp://mail.internal:587',
  };

  it('refuses an unknown EMAIL_PROVIDER with one message naming the choices', () => {
    expect(() => validateEnv({ APP_SECRET: secret, EMAIL_PROVIDER: 'sparkpost' })).toThrow(
      /EMAIL_PROVIDER: must be one of resend, ses, sendgrid, postmark, mailgun/,
    );
  });

  it.each([
    ['ses', /SES_SNS_TOPIC_ARNS: is required/],
    ['sendgrid', /SENDGRID_WEBHOOK_PUBLIC_KEY: is required/],
    ['postmark', /POSTMARK_WEBHOOK_USER: is required[\s\S]*POSTMARK_WEBHOOK_PASSWORD: is required/],
    ['mailgun', /MAILGUN_WEBHOOK_SIGNING_KEY: is required/],
  ])('refuses to start in production with EMAIL_PROVIDER=%s and its secret missing', (provider, message) => {
    expect(() => validateEnv({ ...production, EMAIL_PROVIDER: provider })).toThrow(InvalidEnvironmentError);
    expect(() => validateEnv({ ...production, EMAIL_PROVIDER: provider })).toThrow(message);
  });

  it('starts in production with the chosen provider’s secret set, and without EMAIL_PROVIDER as before', () => {
    expect(validateEnv({ ...production }).EMAIL_PROVIDER).toBe('resend');
    // Resend, the default, as before: without WEBHOOK_SECRET its webhooks are refused, the service starts.
    expect(validateEnv({ ...production, EMAIL_PROVIDER: 'resend' }).EMAIL_PROVIDER).toBe('resend');
    const env = validateEnv({
      ...production,
      EMAIL_PROVIDER: 'ses',
      SES_SNS_TOPIC_ARNS:
        'arn:aws:sns:eu-west-1:123456789012:ses-events, arn:aws:sns:us-east-1:123456789012:b',
    });
    expect(env.EMAIL_PROVIDER).toBe('ses');
  });

  it('refuses a SendGrid key that is not a public key, and topic ARNs that are not ARNs', () => {
    expect(() => validateEnv({ APP_SECRET: secret, SENDGRID_WEBHOOK_PUBLIC_KEY: 'bm90IGEga2V5' })).toThrow(
      /SENDGRID_WEBHOOK_PUBLIC_KEY: must be the base64 verification key/,
    );
    expect(() => validateEnv({ APP_SECRET: secret, SES_SNS_TOPIC_ARNS: 'my-topic' })).toThrow(
      /SES_SNS_TOPIC_ARNS: must be SNS topic ARNs/,
    );
  });

  it('refuses the test stand-in for SNS in production', () => {
    expect(() => validateEnv({ ...production, SNS_TEST_ENDPOINT: '127.0.0.1:8443' })).toThrow(
      /SNS_TEST_ENDPOINT: .*refused when NODE_ENV=production/,
    );
  });
});

describe('Provider formats: Amazon SES through SNS', () => {
  const TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
  let certificate: TestCertificate;
  let impostor: TestCertificate;
  let sns: FakeSns;
  beforeAll(async () => {
    certificate = testCertificate();
    impostor = testCertificate();
    sns = await startFakeSns(certificate);
  });
  afterAll(async () => {
    await sns.close();
    certificate.dispose();
    impostor.dispose();
  });
  const h = providerApp(
    () => ({
      EMAIL_PROVIDER: 'ses',
      SES_SNS_TOPIC_ARNS: TOPIC,
      SNS_TEST_ENDPOINT: sns.host,
      SNS_TEST_CA_FILE: certificate.certFile,
    }),
    // The production budget of certificate fetches, over a window and a memory no slow run outlasts.
    () => [
      {
        provide: SNS_ENDPOINT_RULE,
        useValue: {
          ...snsEndpointRule(sns.host, certificate.certFile),
          fetches: { ...SNS_CERTIFICATE_FETCHES, windowMs: HOUR_MS, failureMemoryMs: HOUR_MS },
        },
      },
    ],
  );
  // SES answers a message sent over SMTP with `250 Ok <message id>`: that id becomes `mail.messageId`.
  const sesId = () => `0000014a${randomBytes(4).toString('hex')}-${randomUUID()}-000000`;
  const sendThroughSes = async (to: string) => {
    const id = sesId();
    h.smtp.acceptText = () => `Ok ${id}`;
    const target = await sendOne(h, to);
    expect(target.providerMessageId).toBe(id);
    return target;
  };
  const notify = (event: unknown, options: { version?: '1' | '2'; messageId?: string; key?: string } = {}) =>
    signSns(
      snsNotification(TOPIC, event, options.messageId),
      options.key ?? certificate.key,
      sns.certificateUrl,
      options.version,
    );

  it('confirms a SubscriptionConfirmation by visiting its SubscribeURL, and answers 200', async () => {
    const token = randomBytes(32).toString('hex');
    const confirmation = signSns(
      {
        Type: 'SubscriptionConfirmation',
        MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
        Token: token,
        TopicArn: TOPIC,
        Message: `You have chosen to subscribe to the topic ${TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
        SubscribeURL: sns.subscribeUrl(token),
        Timestamp: new Date().toISOString(),
      },
      certificate.key,
      sns.certificateUrl,
      '1',
    );
    const res = await post(h, confirmation);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, processed: false, eventId: null });
    expect(sns.requests.filter((path) => path.includes(`Token=${token}`))).toHaveLength(1);
  });

  it('reads a permanent bounce (SignatureVersion 1 and 2): hard, the address suppressed', async () => {
    for (const version of ['1', '2'] as const) {
      const target = await sendThroughSes(`jane.${version}@example.com`);
      const res = await post(h, notify(sesSamples(target).bounce, { version }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, processed: true });
      expect(await eventsOf(h, target.messageId)).toEqual([
        expect.objectContaining({ type: 'bounced', bounceType: 'hard' }),
      ]);
      expect(await suppressed(h, target.to)).toMatchObject({ reason: 'hard_bounce' });
    }
  });

  it('finds the message by SES’s own id when the notification does not carry our Message-ID', async () => {
    const target = await sendThroughSes('only-ses-id@example.com');
    const res = await post(h, notify(sesSamples(target, null).delivery));
    expect(res.body).toMatchObject({ processed: true });
    expect(await eventsOf(h, target.messageId)).toEqual([expect.objectContaining({ type: 'delivered' })]);
  });

  it('reads transient bounces as soft, complaints, deliveries, opens and clicks (notification and event publishing)', async () => {
    const target = await sendThroughSes('reader@example.com');
    const samples = sesSamples(target);
    for (const sample of [
      samples.transientBounce,
      samples.delivery,
      samples.open,
      samples.click,
      samples.complaint,
    ]) {
      const res = await post(h, notify(sample));
      expect(res.body).toMatchObject({ success: true, processed: true });
    }
    const events = await eventsOf(h, target.messageId);
    expect(kinds(events)).toEqual(['bounced/soft', 'clicked', 'complained', 'delivered', 'opened']);
    expect(clickOf(events)).toMatchObject({
      url: samples.click.click.link,
      userAgent: samples.click.click.userAgent,
    });
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'complaint' });
  });

  it('processes a repeated delivery (same SNS MessageId) once', async () => {
    const target = await sendThroughSes('twice@example.com');
    const messageId = randomUUID();
    const first = await post(h, notify(sesSamples(target).delivery, { messageId }));
    const again = await post(h, notify(sesSamples(target).delivery, { messageId }));
    expect(first.body).toMatchObject({ processed: true });
    expect(again.body).toEqual({ success: true, processed: false, eventId: first.body.eventId });
    expect(await eventsOf(h, target.messageId)).toHaveLength(1);
  });

  it('answers an unknown event type processed:false', async () => {
    const target = await sendThroughSes('render@example.com');
    const res = await post(h, notify(sesSamples(target).rendering));
    expect(res.body).toEqual({ success: true, processed: false, eventId: null });
  });

  it('fetches the signing certificate once and keeps it', async () => {
    const target = await sendThroughSes('cached@example.com');
    for (let i = 0; i < 3; i++) await post(h, notify(sesSamples(target).open));
    expect(sns.requests.filter((path) => path.endsWith('.pem'))).toHaveLength(1);
  });

  it('refuses a wrong signature, a tampered message and a stranger’s topic, counting each', async () => {
    const target = await sendThroughSes('forged@example.com');
    const bounce = sesSamples(target).bounce;
    await expectRefusedAndCounted(h, () => notify(bounce, { key: impostor.key }), /Invalid SNS signature/);
    await expectRefusedAndCounted(
      h,
      () => {
        const signed = notify(sesSamples(target).delivery);
        return { ...signed, payload: signed.payload.replace('Delivery', 'Bounce') };
      },
      /Invalid SNS signature/,
    );
    await expectRefusedAndCounted(
      h,
      () =>
        signSns(
          snsNotification('arn:aws:sns:us-west-2:999999999999:Other', bounce),
          certificate.key,
          sns.certificateUrl,
        ),
      /topic/,
    );
    expect(await suppressed(h, target.to)).toBeNull();
  });

  it.each([
    ['another host', 'https://sns.us-west-2.amazonaws.com.evil.test/SimpleNotificationService-x.pem'],
    ['plain HTTP', 'http://HOST/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem'],
  ])('refuses a certificate URL on %s without fetching it', async (_label, url) => {
    const before = sns.requests.length;
    const signed = signSns(
      snsNotification(TOPIC, { notificationType: 'Delivery' }),
      certificate.key,
      url.replace('HOST', sns.host),
    );
    const res = await post(h, signed);
    expect(res.status).toBe(401);
    expect(sns.requests.length).toBe(before);
  });

  it('answers 503 when the signing certificate cannot be fetched, so that SNS retries', async () => {
    const target = await sendThroughSes('unfetched@example.com');
    const message = snsNotification(TOPIC, sesSamples(target).bounce);
    const res = await post(
      h,
      signSns(message, certificate.key, `https://${sns.host}/SimpleNotificationService-gone.pem`),
    );
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(/certificate/) as string });
    expect(await suppressed(h, target.to)).toBeNull();
  });

  it('remembers a failed certificate fetch: 30 requests from one client cost one fetch', async () => {
    const url = `https://${sns.host}/SimpleNotificationService-missing.pem`;
    const client = nextClient();
    for (let i = 0; i < 30; i++) {
      const res = await post(
        h,
        signSns(snsNotification(TOPIC, { notificationType: 'Delivery' }), certificate.key, url),
        client,
      );
      expect(res.status).toBe(503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(sns.requests.filter((path) => path.endsWith('-missing.pem'))).toHaveLength(1);
  });

  it('limits the fetches new certificate URLs set off, per client and in total', async () => {
    const before = sns.requests.length;
    const forge = (n: number) =>
      signSns(
        snsNotification(TOPIC, { notificationType: 'Delivery' }),
        certificate.key,
        `https://${sns.host}/SimpleNotificationService-forged-${n}.pem`,
      );
    const client = nextClient();
    for (let i = 0; i < 30; i++) expect((await post(h, forge(i), client)).status).toBe(503);
    expect(sns.requests.length - before).toBe(SNS_CERTIFICATE_FETCHES.perClient);
    for (let i = 30; i < 60; i++) expect((await post(h, forge(i))).status).toBe(503);
    expect(sns.requests.length - before).toBeLessThanOrEqual(SNS_CERTIFICATE_FETCHES.total);
  });

  it('refuses a replay older than the delivery receipts are kept', async () => {
    const message = {
      ...snsNotification(TOPIC, { notificationType: 'Delivery' }),
      Timestamp: '2012-05-02T00:54:06.655Z',
    };
    const res = await post(h, signSns(message, certificate.key, sns.certificateUrl));
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/too old/);
  });
});

describe('Provider formats: SendGrid Event Webhook', () => {
  const keys = sendGridKeys();
  const h = providerApp(() => ({
    EMAIL_PROVIDER: 'sendgrid',
    SENDGRID_WEBHOOK_PUBLIC_KEY: keys.publicKeyBase64,
  }));
  // SendGrid's SMTP answer names the X-Message-Id: the part of sg_message_id before its first '.'.
  const sendThroughSendGrid = async (to: string) => {
    const id = randomBytes(16).toString('base64url');
    h.smtp.acceptText = () => `Ok: queued as ${id}`;
    const target = await sendOne(h, to);
    expect(target.providerMessageId).toBe(id);
    return target;
  };

  it('reads a batch of the published events; a bounce suppresses the address', async () => {
    const target = await sendThroughSendGrid('example@test.com');
    const s = sendGridSamples(target);
    const res = await post(
      h,
      signSendGrid([s.processed, s.delivered, s.open, s.click, s.bounce, s.unsubscribe], keys.privateKey),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, processed: true });
    expect((res.body.events as { processed: boolean }[]).map((e) => e.processed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    const events = await eventsOf(h, target.messageId);
    expect(kinds(events)).toEqual(['bounced/hard', 'clicked', 'delivered', 'opened', 'sent']);
    expect(clickOf(events)).toMatchObject({ url: 'http://www.sendgrid.com/' });
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'hard_bounce' });
  });

  it('takes blocked, dropped and deferred as soft or delayed, and a spam report as a complaint', async () => {
    const target = await sendThroughSendGrid('soft@test.com');
    const s = sendGridSamples(target);
    await post(h, signSendGrid([s.blocked, s.dropped, s.deferred], keys.privateKey));
    expect(kinds(await eventsOf(h, target.messageId))).toEqual([
      'bounced/soft',
      'bounced/soft',
      'delivery_delayed',
    ]);
    expect(await suppressed(h, target.to)).toBeNull();
    await post(h, signSendGrid([s.spamreport], keys.privateKey));
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'complaint' });
  });

  it('matches an open by the custom argument the worker adds to every message', async () => {
    const target = await sendThroughSendGrid('args@test.com');
    expect(JSON.parse(h.smtp.received[0].headers['x-smtpapi'])).toEqual({
      unique_args: { app_message_id: target.messageId },
    });
    // SendGrid copies custom arguments into every event; here SendGrid's own id names another message.
    const open = {
      ...sendGridSamples(target).open,
      app_message_id: target.messageId,
      sg_message_id: 'other.filter0.0',
    };
    expect((await post(h, signSendGrid([open], keys.privateKey))).body).toMatchObject({ processed: true });
    expect(await eventsOf(h, target.messageId)).toHaveLength(1);
  });

  it('takes a batch larger than other routes’ bodies (SendGrid batches up to 768 KB)', async () => {
    const target = await sendThroughSendGrid('batch@test.com');
    const { delivered } = sendGridSamples(target);
    const batch = Array.from({ length: 250 }, (_, i) => ({ ...delivered, sg_event_id: `batch-${i}` }));
    const signed = signSendGrid(batch, keys.privateKey);
    expect(signed.payload.length).toBeGreaterThan(64 * 1024);
    const res = await post(h, signed);
    expect(res.status).toBe(200);
    expect(res.body.events).toHaveLength(250);
    expect(await eventsOf(h, target.messageId)).toHaveLength(250);
  });

  it('processes a repeated delivery (same sg_event_id) once', async () => {
    const target = await sendThroughSendGrid('twice@test.com');
    const { delivered } = sendGridSamples(target);
    const first = await post(h, signSendGrid([delivered], keys.privateKey));
    const again = await post(h, signSendGrid([delivered], keys.privateKey));
    expect(first.body).toMatchObject({ processed: true });
    expect(again.body).toEqual({ success: true, processed: false, eventId: first.body.eventId });
    expect(await eventsOf(h, target.messageId)).toHaveLength(1);
  });

  it('refuses a wrong key, a tampered body and a replayed (stale) request, counting each', async () => {
    const target = await sendThroughSendGrid('forged@test.com');
    const { bounce } = sendGridSamples(target);
    const other = sendGridKeys();
    await expectRefusedAndCounted(
      h,
      () => signSendGrid([bounce], other.privateKey),
      /Invalid webhook signature/,
    );
    await expectRefusedAndCounted(
      h,
      () => {
        const signed = signSendGrid([sendGridSamples(target).delivered], keys.privateKey);
        return { ...signed, payload: signed.payload.replace('"delivered"', '"bounce"') };
      },
      /Invalid webhook signature/,
    );
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    await expectRefusedAndCounted(h, () => signSendGrid([bounce], keys.privateKey, tenMinutesAgo), /too old/);
    expect(await suppressed(h, target.to)).toBeNull();
  });
});

describe('Provider formats: Postmark', () => {
  const USER = 'postmark-hooks';
  const PASSWORD = randomBytes(18).toString('base64url');
  const h = providerApp(() => ({
    EMAIL_PROVIDER: 'postmark',
    POSTMARK_WEBHOOK_USER: USER,
    POSTMARK_WEBHOOK_PASSWORD: PASSWORD,
  }));
  const sendThroughPostmark = async (to: string) => {
    const target = await sendOne(h, to);
    // Postmark's MessageID; its events also carry our Message-ID as the metadata the worker adds.
    expect(h.smtp.received[0].headers['x-pm-metadata-app_message_id']).toBe(target.messageId);
    return { ...target, providerMessageId: randomUUID() };
  };
  const samplesFor = (target: SampleTarget) => postmarkSamples(target, { app_message_id: target.messageId });
  const signed = (record: unknown) => postmarkRequest(record, USER, PASSWORD);

  it('reads a HardBounce as hard and suppresses the address', async () => {
    const target = await sendThroughPostmark('john@example.com');
    const res = await post(h, signed(samplesFor(target).bounce));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, processed: true });
    expect(await eventsOf(h, target.messageId)).toEqual([
      expect.objectContaining({ type: 'bounced', bounceType: 'hard' }),
    ]);
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'hard_bounce' });
  });

  it('reads SoftBounce as soft, Delivery, Open, Click and SpamComplaint; other record types are not processed', async () => {
    const target = await sendThroughPostmark('reader@example.com');
    const s = samplesFor(target);
    for (const record of [s.softBounce, s.delivery, s.open, s.click, s.spamComplaint]) {
      expect((await post(h, signed(record))).body).toMatchObject({ processed: true });
    }
    expect((await post(h, signed(s.subscriptionChange))).body).toEqual({
      success: true,
      processed: false,
      eventId: null,
    });
    const events = await eventsOf(h, target.messageId);
    expect(kinds(events)).toEqual(['bounced/soft', 'clicked', 'complained', 'delivered', 'opened']);
    expect(clickOf(events)).toMatchObject({ url: 'https://example.com' });
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'complaint' });
  });

  it('processes a repeated delivery (RecordType + MessageID + ID or time) once', async () => {
    const target = await sendThroughPostmark('twice@example.com');
    const { delivery } = samplesFor(target);
    const first = await post(h, signed(delivery));
    const again = await post(h, signed(delivery));
    expect(first.body).toMatchObject({ processed: true });
    expect(again.body).toEqual({ success: true, processed: false, eventId: first.body.eventId });
    expect(await eventsOf(h, target.messageId)).toHaveLength(1);
  });

  it('refuses wrong or missing credentials, counting each', async () => {
    const target = await sendThroughPostmark('forged@example.com');
    const { bounce } = samplesFor(target);
    await expectRefusedAndCounted(
      h,
      () => postmarkRequest(bounce, USER, `${PASSWORD}x`),
      /Invalid webhook credentials/,
    );
    await expectRefusedAndCounted(
      h,
      () => postmarkRequest(bounce, 'someone', PASSWORD),
      /Invalid webhook credentials/,
    );
    await expectRefusedAndCounted(
      h,
      () => ({ payload: JSON.stringify(bounce), headers: { 'content-type': 'application/json' } }),
      /Missing basic-auth/,
    );
    expect(await suppressed(h, target.to)).toBeNull();
  });
});

describe('Provider formats: Mailgun', () => {
  const KEY = randomBytes(16).toString('hex');
  const h = providerApp(() => ({ EMAIL_PROVIDER: 'mailgun', MAILGUN_WEBHOOK_SIGNING_KEY: KEY }));
  const signed = (eventData: unknown, options?: Parameters<typeof signMailgun>[2]) =>
    signMailgun(eventData, KEY, options);

  it('reads a permanent failure as a hard bounce and suppresses the address', async () => {
    const target = await sendOne(h, 'alice@example.com');
    const res = await post(h, signed(mailgunEventData(target).permanentFail));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, processed: true });
    expect(await eventsOf(h, target.messageId)).toEqual([
      expect.objectContaining({ type: 'bounced', bounceType: 'hard' }),
    ]);
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'hard_bounce' });
  });

  it('reads a temporary failure as soft, deliveries, opens, clicks and complaints; unknown events are not processed', async () => {
    const target = await sendOne(h, 'reader@example.com');
    const data = mailgunEventData(target);
    for (const event of [data.temporaryFail, data.delivered, data.opened, data.clicked, data.complained]) {
      expect((await post(h, signed(event))).body).toMatchObject({ processed: true });
    }
    expect((await post(h, signed(data.unsubscribed))).body).toEqual({
      success: true,
      processed: false,
      eventId: null,
    });
    const events = await eventsOf(h, target.messageId);
    expect(kinds(events)).toEqual(['bounced/soft', 'clicked', 'complained', 'delivered', 'opened']);
    expect(clickOf(events)).toMatchObject({ url: data.clicked.url });
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'complaint' });
  });

  it('processes a repeated delivery (same event-data id, new signature) once', async () => {
    const target = await sendOne(h, 'twice@example.com');
    const { delivered } = mailgunEventData(target);
    const first = await post(h, signed(delivered));
    const again = await post(h, signed(delivered));
    expect(first.body).toMatchObject({ processed: true });
    expect(again.body).toEqual({ success: true, processed: false, eventId: first.body.eventId });
    expect(await eventsOf(h, target.messageId)).toHaveLength(1);
  });

  it('gives the token back when processing fails, so that Mailgun’s retry of the request goes through', async () => {
    const target = await sendOne(h, 'retry@example.com');
    const request = signed(mailgunEventData(target).permanentFail);
    const suppression = h.t.app.get(SuppressionService);
    const failOnce = jest
      .spyOn(suppression, 'suppress')
      .mockRejectedValueOnce(new Error('database unavailable'));
    try {
      expect((await post(h, request)).status).toBe(500);
      const retry = await post(h, request);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ processed: true });
    } finally {
      failOnce.mockRestore();
    }
    expect(await suppressed(h, target.to)).toMatchObject({ reason: 'hard_bounce' });
  });

  it('refuses a token used before, on any instance (the token is stored)', async () => {
    const target = await sendOne(h, 'replay@example.com');
    const request = signed(mailgunEventData(target).delivered);
    expect((await post(h, request)).status).toBe(200);
    const replay = await post(h, request);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toMatch(/token already used/);
    expect(
      await h.t.connection.collection('email_webhook_tokens').countDocuments({ _id: request.token as never }),
    ).toBe(1);
  });

  it('refuses a wrong key, a stale timestamp and a replayed token, counting each', async () => {
    const target = await sendOne(h, 'forged@example.com');
    const fail = mailgunEventData(target).permanentFail;
    await expectRefusedAndCounted(h, () => signMailgun(fail, 'not-the-key'), /Invalid webhook signature/);
    const stale = new Date(Date.now() - 10 * 60_000);
    await expectRefusedAndCounted(h, () => signed(fail, { at: stale }), /too old/);
    const used = signed(mailgunEventData(target).delivered);
    expect((await post(h, used)).status).toBe(200);
    await expectRefusedAndCounted(h, () => used, /token already used/);
    expect(await suppressed(h, target.to)).toBeNull();
  });
});
