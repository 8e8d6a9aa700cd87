import { X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

/** Where SNS's signing certificates and subscription links may point, and how long a fetch may take. */
export interface SnsEndpointRule {
  /** Matched against the URL's host (with its port, if any). */
  host: RegExp;
  /** Extra trusted CA for the HTTPS fetches: a test's self-signed server; AWS needs none. */
  ca?: string;
  timeoutMs: number;
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
 * SNS signing certificates by URL: fetched once (concurrent requests share the fetch), at most
 * MAX_CERTIFICATES kept, the least recently used dropped first. A failed fetch is not kept.
 */
export class SnsCertificates {
  private readonly keys = new Map<string, Promise<KeyObject>>();

  constructor(private readonly rule: SnsEndpointRule) {}

  publicKey(url: URL): Promise<KeyObject> {
    const href = url.href;
    const kept = this.keys.get(href);
    // Map order is insertion order: deleting and setting again makes this entry the most recently used.
    this.keys.delete(href);
    const key = kept ?? this.fetch(url);
    this.keys.set(href, key);
    const oldest = this.keys.keys().next();
    if (this.keys.size > MAX_CERTIFICATES && !oldest.done) this.keys.delete(oldest.value);
    return key;
  }

  private fetch(url: URL): Promise<KeyObject> {
    const key = getSnsUrl(url, this.rule).then((pem) => new X509Certificate(pem).publicKey);
    key.catch(() => {
      if (this.keys.get(url.href) === key) this.keys.delete(url.href);
    });
    return key;
  }
}
