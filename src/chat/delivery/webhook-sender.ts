import { Injectable } from '@nestjs/common';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { PermanentJobError } from '../../queue/retry-policy';
import { hostOf, WebhookAddressPolicy } from './webhook-address-policy';

/** A delivery that failed and may pass later (no answer in time, a 5xx, 408 or 429 answer). */
export class WebhookDeliveryError extends Error {}

/** The receiver refused the message: trying again cannot help. */
export class WebhookRefusedError extends PermanentJobError {}

const USER_AGENT = 'admin-service-chat-notifier/1';

/**
 * 4xx answers are the receiver refusing this message (a revoked webhook, a malformed body): final. 408
 * (it timed out reading) and 429 (rate limited) are worth another attempt, as are 5xx answers.
 */
const isPermanentStatus = (status: number) =>
  (status >= 300 && status < 500 && status !== 408 && status !== 429) || status < 200;

/**
 * POSTs a JSON body to a webhook with node:http(s): one connection per call, no redirects followed (a
 * redirect could lead anywhere), the host resolved through the address policy (production connects only to
 * public addresses, checked as they are connected to), and the whole exchange cut after `timeoutMs`.
 */
@Injectable()
export class WebhookSender {
  constructor(private readonly policy: WebhookAddressPolicy) {}

  post(url: string, body: unknown, timeoutMs: number): Promise<void> {
    const target = new URL(url);
    const host = hostOf(target);
    if (isIP(host)) this.policy.checkLiteral(host);
    const payload = Buffer.from(JSON.stringify(body));
    const signal = AbortSignal.timeout(timeoutMs);
    const client = target.protocol === 'https:' ? https : http;
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error) =>
        reject(signal.aborted ? new WebhookDeliveryError(`No answer within ${timeoutMs} ms`) : error);
      const request = client.request(
        target,
        {
          method: 'POST',
          agent: false,
          lookup: this.policy.lookup,
          signal,
          headers: {
            'content-type': 'application/json',
            'content-length': payload.length,
            'user-agent': USER_AGENT,
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          // The body is not needed: read and dropped, within the same timeout.
          response.resume();
          response.on('error', fail);
          response.on('end', () => {
            if (status >= 200 && status < 300) return resolve();
            const answer = `The webhook answered ${status}`;
            reject(
              isPermanentStatus(status) ? new WebhookRefusedError(answer) : new WebhookDeliveryError(answer),
            );
          });
        },
      );
      request.on('error', fail);
      request.end(payload);
    });
  }
}
