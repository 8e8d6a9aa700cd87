import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Each provider's request signing, done the way the provider does it, with keys generated for the test
 * (shared by test/provider-formats.e2e-spec.ts and bench/provider-webhooks.bench.ts).
 */

export interface SignedRequest {
  payload: string;
  headers: Record<string, string>;
}

/* ------------------------------------------------------------------------------------------ SendGrid */

export function sendGridKeys(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privateKey,
    publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}

/** ECDSA (SHA-256, DER, base64) over the timestamp followed by the body, as SendGrid signs. */
export function signSendGrid(events: unknown[], privateKey: KeyObject, at = new Date()): SignedRequest {
  const payload = JSON.stringify(events);
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = sign('sha256', Buffer.from(timestamp + payload), privateKey).toString('base64');
  return {
    payload,
    headers: {
      'content-type': 'application/json',
      'x-twilio-email-event-webhook-signature': signature,
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
  };
}

/* ------------------------------------------------------------------------------------------ Postmark */

export function postmarkRequest(record: unknown, user: string, password: string): SignedRequest {
  return {
    payload: JSON.stringify(record),
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
    },
  };
}

/* ------------------------------------------------------------------------------------------- Mailgun */

/** `{signature: {timestamp, token, signature}, "event-data"}` with a fresh 50-character token. */
export function signMailgun(
  eventData: unknown,
  signingKey: string,
  { at = new Date(), token = randomBytes(25).toString('hex') } = {},
): SignedRequest & { token: string } {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest('hex');
  return {
    token,
    payload: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }),
    headers: { 'content-type': 'application/json' },
  };
}

/* ----------------------------------------------------------------------------------------------- SNS */

/** A self-signed certificate for 127.0.0.1 (openssl), used both as SNS's signing certificate and for TLS. */
export interface TestCertificate {
  key: string;
  cert: string;
  certFile: string;
  dispose(): void;
}

export function testCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'sns-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    certFile,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A local stand-in for SNS's HTTPS endpoints: serves the certificate, answers SubscribeURL visits. */
export interface FakeSns {
  host: string;
  certificateUrl: string;
  subscribeUrl(token: string): string;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

export const CERTIFICATE_PATH = '/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem';

export async function startFakeSns(certificate: TestCertificate): Promise<FakeSns> {
  const requests: string[] = [];
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    requests.push(req.url ?? '');
    if (req.url === CERTIFICATE_PATH) {
      res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' }).end(certificate.cert);
    } else if (req.url?.startsWith('/?Action=ConfirmSubscription')) {
      res.writeHead(200, { 'content-type': 'text/xml' }).end('<ConfirmSubscriptionResponse/>');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    certificateUrl: `https://${host}${CERTIFICATE_PATH}`,
    subscribeUrl: (token) =>
      `https://${host}/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=${token}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SIGNED_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
};

/**
 * Signs an SNS message as SNS does: `Name\nvalue\n` of the signed fields, RSA with SHA1 (1) or SHA256 (2).
 */
export function signSns(
  message: Record<string, string>,
  privateKey: string,
  certificateUrl: string,
  version: '1' | '2' = '2',
): SignedRequest {
  const text = SIGNED_FIELDS[message.Type]
    .filter((name) => typeof message[name] === 'string')
    .map((name) => `${name}\n${message[name]}\n`)
    .join('');
  const signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(text), privateKey).toString(
    'base64',
  );
  const envelope = {
    ...message,
    SignatureVersion: version,
    Signature: signature,
    SigningCertURL: certificateUrl,
  };
  return {
    payload: JSON.stringify(envelope),
    headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': message.Type },
  };
}

/** SNS's Notification envelope (AWS's HTTP/HTTPS notification JSON sample) around an SES event. */
export function snsNotification(
  topicArn: string,
  sesEvent: unknown,
  messageId: string = randomUUID(),
): Record<string, string> {
  return {
    Type: 'Notification',
    MessageId: messageId,
    TopicArn: topicArn,
    Message: JSON.stringify(sesEvent),
    Timestamp: new Date().toISOString(),
    UnsubscribeURL:
      'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:123456789012:MyTopic:c9135db0-26c4-47ec-8998-413945fb5a96',
  };
}
