import { Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { AppConfig } from '../config/env';
import { TRACKING_LABEL } from './dns-records';
import { SenderDomain } from './schemas/sender-domain.schema';

/**
 * How long an instance keeps what it read of link hosts: a domain that fails its re-check stops carrying
 * links within this time everywhere (as it stops signing: sending-identities.ts).
 */
const CACHE_MS = 30_000;
/** Hosts remembered at most: a flood of made-up Host headers costs a bounded map. */
const CACHE_SIZE = 1_000;

interface Cached<T> {
  value: T;
  readAt: number;
}

/** The one answer on a link host to a token that is not its app's (forged, expired or another app's). */
export const LINK_NOT_FOUND = 'Link not found';

/** A link host of a sender domain: `links.<domain>`. */
export const linkHostOf = (domain: string) => `${TRACKING_LABEL}.${domain}`;

/**
 * Link domains (docs/operations/sending-domains.md "Link domains"): an app whose sender domain is verified
 * with a verified `tracking` CNAME has its click, pixel, unsubscribe and confirmation links on
 * `links.<domain>`, with PUBLIC_BASE_URL's scheme, port and path; every other app keeps PUBLIC_BASE_URL.
 * On a link host the service answers only tokens of that host's app.
 */
@Injectable()
export class LinkDomains {
  private readonly publicBaseUrl: string;
  private readonly bases = new Map<string, Cached<string>>();
  private readonly owners = new Map<string, Cached<string | null>>();

  constructor(
    @InjectModel(SenderDomain.name) private readonly domains: Model<SenderDomain>,
    config: ConfigService<AppConfig, true>,
  ) {
    this.publicBaseUrl = config.get('publicBaseUrl', { infer: true });
  }

  /** Where the app's links point: its link host when one is verified, else PUBLIC_BASE_URL. */
  async baseUrlOf(appId: string | null | undefined): Promise<string> {
    if (!appId) return this.publicBaseUrl;
    const cached = this.fresh(this.bases.get(appId));
    if (cached !== undefined) return cached;
    // An app has a handful of verified domains; one whose tracking record is verified carries its links.
    const verified = await this.domains
      .find({ appId, state: 'verified' }, { domain: 1, recordStates: 1 })
      .lean<Pick<SenderDomain, 'domain' | 'recordStates'>[]>()
      .exec();
    const domain = verified.find((candidate) => candidate.recordStates?.tracking === 'verified');
    const base = domain ? this.onHost(linkHostOf(domain.domain)) : this.publicBaseUrl;
    this.remember(this.bases, appId, base);
    return base;
  }

  /**
   * Whether a request on `host` must be refused for a token of `appId` (undefined: no genuine token). On a
   * link host only that host's app's genuine tokens pass, and every other token gets the same 404, so the
   * answer tells nothing of whose a token is. Any other host answers as it always did.
   */
  async refuses(host: string, appId: string | undefined): Promise<boolean> {
    const owner = await this.ownerOf(host.toLowerCase());
    return owner !== null && owner !== appId;
  }

  /** 404 (LINK_NOT_FOUND) when `refuses`: the controllers of link routes call it first. */
  async assertAnswers(host: string, appId: string | undefined): Promise<void> {
    if (await this.refuses(host, appId)) throw new NotFoundException(LINK_NOT_FOUND);
  }

  /** Whether `host` has a link host's shape: only such a host is looked up (the pixel's fast path). */
  mayBeLinkHost(host: string): boolean {
    return host.toLowerCase().startsWith(`${TRACKING_LABEL}.`);
  }

  /** The app whose verified link host `host` is, or null for any other host (no read for most). */
  private async ownerOf(host: string): Promise<string | null> {
    const prefix = `${TRACKING_LABEL}.`;
    if (!this.mayBeLinkHost(host)) return null;
    const cached = this.fresh(this.owners.get(host));
    if (cached !== undefined) return cached;
    const domain = await this.domains
      .findOne({ domain: host.slice(prefix.length) }, { appId: 1, state: 1, recordStates: 1 })
      .lean<Pick<SenderDomain, 'appId' | 'state' | 'recordStates'>>()
      .exec();
    const carries = domain?.state === 'verified' && domain.recordStates?.tracking === 'verified';
    const owner = carries ? domain.appId : null;
    this.remember(this.owners, host, owner);
    return owner;
  }

  /** PUBLIC_BASE_URL on another host (scheme, port and path kept: the CNAME reaches the same server). */
  private onHost(host: string): string {
    const url = new URL(this.publicBaseUrl);
    url.hostname = host;
    return url.toString().replace(/\/+$/, '');
  }

  /** Drops what this instance remembers (a domain of this instance was verified or removed). */
  forget(): void {
    this.bases.clear();
    this.owners.clear();
  }

  private fresh<T>(entry: Cached<T> | undefined): T | undefined {
    return entry && Date.now() - entry.readAt < CACHE_MS ? entry.value : undefined;
  }

  private remember<T>(map: Map<string, Cached<T>>, key: string, value: T): void {
    if (map.size >= CACHE_SIZE) map.delete(map.keys().next().value!);
    map.set(key, { value, readAt: Date.now() });
  }
}
