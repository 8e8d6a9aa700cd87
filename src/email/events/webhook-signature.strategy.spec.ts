import { BadRequestException, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Model } from 'mongoose';
import { CredentialChecks } from '../../common/auth/credential-checks';
import { ForgedSignatureBudget } from './forged-signature-budget';
import { AWS_SNS_ENDPOINTS } from './providers/sns-endpoints';
import type { WebhookToken } from './schemas/webhook-token.schema';
import { WebhookSignatureStrategy, type WebhookRequest } from './webhook-signature.strategy';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const storage = new ThrottlerStorageService();
const strategyWith = (secret?: string) =>
  new WebhookSignatureStrategy(
    new ConfigService({ EMAIL_PROVIDER: 'resend', ...(secret ? { WEBHOOK_SECRET: secret } : {}) }),
    new ForgedSignatureBudget(storage),
    // Resend's format needs neither Mailgun's tokens nor SNS's endpoints.
    {} as Model<WebhookToken>,
    AWS_SNS_ENDPOINTS,
    new CredentialChecks(),
  );

/** A request as the provider sends it: the body's bytes signed with `secret` at `sentAt`. */
function signedRequest(
  body: string,
  { secret = SECRET, sentAt = new Date(), prefix = 'webhook', id = 'msg_2p5Yc' } = {},
): WebhookRequest {
  const signature = new Webhook(secret).sign(id, sentAt, body);
  // Each request from an address of its own: the forged-signature budget is tested end to end.
  const request = {
    headers: {
      [`${prefix}-id`]: id,
      [`${prefix}-timestamp`]: String(Math.floor(sentAt.getTime() / 1000)),
      [`${prefix}-signature`]: signature,
    },
    ip: `192.0.2.${(nextAddress = (nextAddress + 1) % 250)}`,
    rawBody: Buffer.from(body),
  };
  return request as unknown as WebhookRequest & { headers: Record<string, string> };
}
let nextAddress = 0;

const body = JSON.stringify({ type: 'email.delivered', data: { email_id: 'abc@mail.test' } });
const minutes = (n: number) => new Date(Date.now() + n * 60_000);

describe('WebhookSignatureStrategy', () => {
  const strategy = strategyWith(SECRET);
  afterAll(() => storage.onApplicationShutdown());

  it('accepts a correctly signed body and returns its event, keyed by the webhook id', async () => {
    const message = await strategy.verify(signedRequest(body));
    expect(message.deliveries).toEqual([
      {
        id: 'msg_2p5Yc',
        read: {
          event: expect.objectContaining({ type: 'delivered', messageId: 'abc@mail.test' }) as unknown,
        },
      },
    ]);
  });

  it('accepts the svix-* header names', async () => {
    const message = await strategy.verify(signedRequest(body, { prefix: 'svix' }));
    expect(message.deliveries[0].id).toBe('msg_2p5Yc');
  });

  it('accepts a timestamp within the 5-minute tolerance', async () => {
    await expect(strategy.verify(signedRequest(body, { sentAt: minutes(-4) }))).resolves.toBeDefined();
  });

  it.each([
    ['older than 5 minutes', { sentAt: minutes(-6) }, /too old/],
    ['more than 5 minutes ahead', { sentAt: minutes(6) }, /too new/],
    ['signed with another secret', { secret: `whsec_${randomBytes(24).toString('base64')}` }, /signature/],
  ])('refuses a message %s', async (_label, options, message) => {
    await expect(strategy.verify(signedRequest(body, options))).rejects.toThrow(UnauthorizedException);
    await expect(strategy.verify(signedRequest(body, options))).rejects.toThrow(message);
  });

  it('refuses a body changed after signing', async () => {
    const request = signedRequest(body);
    request.rawBody = Buffer.from(body.replace('delivered', 'bounced'));
    await expect(strategy.verify(request)).rejects.toThrow(UnauthorizedException);
  });

  it('refuses a signature moved to another message id', async () => {
    const request = signedRequest(body);
    request.headers['webhook-id'] = 'msg_other';
    await expect(strategy.verify(request)).rejects.toThrow(UnauthorizedException);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
    'refuses a request without %s',
    async (name) => {
      const request = signedRequest(body);
      delete request.headers[name];
      await expect(strategy.verify(request)).rejects.toThrow(/Missing webhook-id/);
    },
  );

  it('refuses a request whose raw body was not kept', async () => {
    const request = signedRequest(body);
    delete request.rawBody;
    await expect(strategy.verify(request)).rejects.toThrow(UnauthorizedException);
  });

  it('refuses everything when WEBHOOK_SECRET is not set', async () => {
    await expect(strategyWith(undefined).verify(signedRequest(body))).rejects.toThrow(/not configured/);
  });

  it('answers 400 for a correctly signed body that is not JSON', async () => {
    await expect(strategy.verify(signedRequest('not json'))).rejects.toThrow(BadRequestException);
  });
});
