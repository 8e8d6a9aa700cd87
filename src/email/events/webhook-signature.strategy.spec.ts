import { BadRequestException, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookSignatureStrategy, type WebhookRequest } from './webhook-signature.strategy';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const strategyWith = (secret?: string) =>
  new WebhookSignatureStrategy(new ConfigService(secret ? { WEBHOOK_SECRET: secret } : {}));

/** A request as the provider sends it: the body's bytes signed with `secret` at `sentAt`. */
function signedRequest(
  body: string,
  { secret = SECRET, sentAt = new Date(), prefix = 'webhook', id = 'msg_2p5Yc' } = {},
): WebhookRequest {
  const signature = new Webhook(secret).sign(id, sentAt, body);
  return {
    headers: {
      [`${prefix}-id`]: id,
      [`${prefix}-timestamp`]: String(Math.floor(sentAt.getTime() / 1000)),
      [`${prefix}-signature`]: signature,
    },
    rawBody: Buffer.from(body),
  };
}

const body = JSON.stringify({ type: 'email.delivered', data: { email_id: 'abc@mail.test' } });
const minutes = (n: number) => new Date(Date.now() + n * 60_000);

describe('WebhookSignatureStrategy', () => {
  const strategy = strategyWith(SECRET);

  it('accepts a correctly signed body and returns the id, time and parsed payload', () => {
    const sentAt = new Date();
    const message = strategy.validate(signedRequest(body, { sentAt }));
    expect(message.id).toBe('msg_2p5Yc');
    expect(Math.floor(message.timestamp.getTime() / 1000)).toBe(Math.floor(sentAt.getTime() / 1000));
    expect(message.payload).toEqual(JSON.parse(body));
  });

  it('accepts the svix-* header names', () => {
    expect(strategy.validate(signedRequest(body, { prefix: 'svix' })).id).toBe('msg_2p5Yc');
  });

  it('accepts a timestamp within the 5-minute tolerance', () => {
    expect(() => strategy.validate(signedRequest(body, { sentAt: minutes(-4) }))).not.toThrow();
  });

  it.each([
    ['older than 5 minutes', { sentAt: minutes(-6) }, /too old/],
    ['more than 5 minutes ahead', { sentAt: minutes(6) }, /too new/],
    ['signed with another secret', { secret: `whsec_${randomBytes(24).toString('base64')}` }, /signature/],
  ])('refuses a message %s', (_label, options, message) => {
    expect(() => strategy.validate(signedRequest(body, options))).toThrow(UnauthorizedException);
    expect(() => strategy.validate(signedRequest(body, options))).toThrow(message);
  });

  it('refuses a body changed after signing', () => {
    const request = signedRequest(body);
    request.rawBody = Buffer.from(body.replace('delivered', 'bounced'));
    expect(() => strategy.validate(request)).toThrow(UnauthorizedException);
  });

  it('refuses a signature moved to another message id', () => {
    const request = signedRequest(body);
    request.headers['webhook-id'] = 'msg_other';
    expect(() => strategy.validate(request)).toThrow(UnauthorizedException);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
    'refuses a request without %s',
    (name) => {
      const request = signedRequest(body);
      delete request.headers[name];
      expect(() => strategy.validate(request)).toThrow(/Missing webhook-id/);
    },
  );

  it('refuses a request whose raw body was not kept', () => {
    const request = signedRequest(body);
    delete request.rawBody;
    expect(() => strategy.validate(request)).toThrow(UnauthorizedException);
  });

  it('refuses everything when WEBHOOK_SECRET is not set', () => {
    expect(() => strategyWith(undefined).validate(signedRequest(body))).toThrow(/not configured/);
  });

  it('answers 400 for a correctly signed body that is not JSON', () => {
    expect(() => strategy.validate(signedRequest('not json'))).toThrow(BadRequestException);
  });
});
