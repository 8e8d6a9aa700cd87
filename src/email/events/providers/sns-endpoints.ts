import { X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { FetchBudget, type FetchLimits } from './fetch-budget';

/** Where SNS's signing certificates and subscription links may point, and how long a fetch may take. */
export interface SnsEndpointRule {
  /** Matched against the URL's host (with its port, if any). */
  host: RegExp;
  /** Extra trusted CA for the HTTPS fetches: a test's self-signed server; AWS needs none. */
  ca?: string;
  timeoutMs: number;
  /** The budget of certificate fetches; SNS_CERTIFICATE_FETCHES unless a test names another. */
  fetches?: SnsFetchPolicy;
}

/** How many certificate fetches requests may set off, and how long a failed one is remembered. */
export interface SnsFetchPolicy extends FetchLimits {
  failureMemoryMs: number;
}

/** Amazon SNS's own endpoints, `sns.<region>.amazonaws.com` (China regions end in `.com.cn`). */
export const AWS_SNS_ENDPOINTS: SnsEndpointRule = {
  host: /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/,
  timeoutMs: 5_000,
};

/** The provider token under which the rule is injected. */
export const SNS_ENDPOINT_RULE = Symbol('SNS_ENDPOINT_RULE');

/**
 * AWS's endpoints, or outside production (validateEnv refuses it there) the local HTTPS server a test or
 * benchmark names in SNS_TEST_ENDPOINT, trusted through SNS_TEST_CA_FILE: nothing else is ever fetched.
 */
export function snsEndpointRule(
  testEndpoint: string | undefined,
  testCaFile: string | undefined,
): SnsEndpointRule {
  if (!testEndpoint) return AWS_SNS_ENDPOINTS;
  const host = new RegExp(`^${testEndpoint.replace(/[.]/g, '\\.')}$`);
  return { host, ca: testCaFile ? readFileSync(testCaFile, 'utf8') : undefined, timeoutMs: 2_000 };
}

/** Certificates kept at once: SNS signs with one per region, replaced every few months. */
const MAX_CERTIFICATES = 32;
/** A PEM certificate is a few KB; a larger answer is not one. */
const MAX_BODY_BYTES = 64 * 1024;

/** An SNS URL that may be fetched: HTTPS, a host the rule accepts, no credentials in it; else null. */
export function snsUrl(value: unknown, rule: SnsEndpointRule): URL | null {
  if (typeof value !== 'string' || value.length > 2_048) return null;
  try {
    const url = new URL(value);
    const plain = url.protocol === 'https:' && url.username === '' && url.password === '';
    return plain && rule.host.test(url.host) ? url : null;
  } catch {
    return null;
  }
}

/** GETs an SNS URL within the rule's time limit; the body when the answer is 200. */
export function getSnsUrl(url: URL, rule: SnsEndpointRule): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca: rule.ca, timeout: rule.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES)
          req.destroy(new Error(`${url.host} answered more than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        if (res.statusCode === 200) resolve(Buffer.concat(chunks).toString('utf8'));
        else reject(new Error(`${url.host} answered ${res.statusCode}`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url.host} did not answer within ${rule.timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Certificate fetches requests may set off: SNS signs with one certificate per region, replaced every few
 * months, so a genuine delivery rarely needs a fetch; a forger naming new URLs gets two a minute, and all
 * clients together ten. A failed fetch is remembered for a minute: requests naming that URL meanwhile fail
 * without a fetch (docs/api/providers/ses.md).
 */
export const SNS_CERTIFICATE_FETCHES: SnsFetchPolicy = {
  perClient: 2,
  total: 10,
  windowMs: 60_000,
  failureMemoryMs: 60_000,
};

/** No certificate for now (a failed fetch remembered, or no fetch left in the budget): retry after that. */
export class SnsCertificateUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

type KeptCertificate = { key: Promise<KeyObject> } | { failure: string; until: number };

/**
 * SNS signing certificates by URL: fetched once (concurrent requests share the fetch), at most
 * MAX_CERTIFICATES kept, the least recently used dropped first. A failed fetch is kept too, for a while,
 * and fetches are limited per client and in total (SNS_CERTIFICATE_FETCHES): forged requests cost the
 * service a bounded number of fetches however many there are.
 */
export class SnsCertificates {
  private readonly kept = new Map<string, KeptCertificate>();
  private readonly budget: FetchBudget;
  private readonly failureMemoryMs: number;

  constructor(
    private readonly rule: SnsEndpointRule,
    private readonly now: () => number = () => Date.now(),
  ) {
    const policy = rule.fetches ?? SNS_CERTIFICATE_FETCHES;
    this.budget = new FetchBudget(policy, now);
    this.failureMemoryMs = policy.failureMemoryMs;
  }

  /** The certificate's public key; rejects with SnsCertificateUnavailable or the fetch's own error. */
  publicKey(url: URL, client: string): Promise<KeyObject> {
    const href = url.href;
    let entry = this.kept.get(href);
    if (entry && 'failure' in entry) {
      const left = entry.until - this.now();
      if (left > 0)
        return Promise.reject(new SnsCertificateUnavailable(entry.failure, Math.ceil(left / 1000)));
      entry = undefined;
    }
    if (!entry) {
      const retryAfter = this.budget.take(client);
      if (retryAfter !== null) {
        return Promise.reject(new SnsCertificateUnavailable('too many certificate fetches', retryAfter));
      }
      entry = { key: this.fetch(url) };
    }
    this.keep(href, entry);
    return entry.key;
  }

  /** Map order is insertion order: deleting and setting again makes this entry the most recently used. */
  private keep(href: string, entry: KeptCertificate): void {
    this.kept.delete(href);
    this.kept.set(href, entry);
    const oldest = this.kept.keys().next();
    if (this.kept.size > MAX_CERTIFICATES && !oldest.done) this.kept.delete(oldest.value);
  }

  private fetch(url: URL): Promise<KeyObject> {
    const key = getSnsUrl(url, this.rule).then((pem) => new X509Certificate(pem).publicKey);
    key.catch((error: Error) => {
      const current = this.kept.get(url.href);
      if (current && 'key' in current && current.key === key) {
        this.keep(url.href, { failure: error.message, until: this.now() + this.failureMemoryMs });
      }
    });
    return key;
  }
}
