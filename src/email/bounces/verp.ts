import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../../config/env';
import { SecretKeys } from '../../config/secret-keys';

/** `b+<job id>.<signature>`: 24 hex digits, then 20 (80 bits of an HMAC). Lower case, 47 characters. */
const LOCAL_PART = /^b\+([0-9a-f]{24})\.([0-9a-f]{20})$/;
const SIGNATURE_BYTES = 10;

/**
 * VERP envelope senders (docs/operations/email-delivery.md "Bounces"): each message's envelope sender names
 * its job, signed, so a bounce report mailed back to it says which message bounced without trusting
 * anything in the report's text, and only our own addresses are accepted by the inbound listener.
 */
@Injectable()
export class VerpAddresses {
  private readonly key: Buffer;
  private readonly bounceDomain: string | undefined;

  constructor(keys: SecretKeys, config: ConfigService<AppConfig, true>) {
    this.key = keys.verp;
    this.bounceDomain = config.get('BOUNCE_DOMAIN', { infer: true })?.toLowerCase();
  }

  /**
   * The envelope sender of a job's message. With BOUNCE_DOMAIN set: a VERP address on the sender domain's
   * verified return-path host (aligned with the From domain for SPF) when there is one, else on
   * BOUNCE_DOMAIN. Without it: the return-path address as given, or none (the From address).
   */
  envelopeFor(jobId: string, returnPath: string | undefined): string | undefined {
    if (!this.bounceDomain) return returnPath;
    const host = returnPath ? returnPath.slice(returnPath.lastIndexOf('@') + 1) : this.bounceDomain;
    return `b+${jobId}.${this.sign(jobId)}@${host.toLowerCase()}`;
  }

  /** The job a VERP address names, or null for any other address or a bad signature (constant-time). */
  jobOf(address: string): string | null {
    const at = address.lastIndexOf('@');
    const found = LOCAL_PART.exec((at > 0 ? address.slice(0, at) : address).toLowerCase());
    if (!found) return null;
    const [, jobId, signature] = found;
    const expected = Buffer.from(this.sign(jobId), 'hex');
    return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? jobId : null;
  }

  private sign(jobId: string): string {
    return createHmac('sha256', this.key).update(jobId).digest().subarray(0, SIGNATURE_BYTES).toString('hex');
  }
}
