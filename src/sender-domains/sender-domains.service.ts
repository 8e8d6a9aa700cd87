import { BadRequestException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import { trusted, type Model } from 'mongoose';
import { findByIdOr404 } from '../common/database/object-id';
import type { AppConfig } from '../config/env';
import { SecretKeys } from '../config/secret-keys';
import { App } from '../apps/schemas/app.schema';
import { newDkimKey } from './dkim-keys';
import { checkRecord, senderDnsResolver } from './dns-check';
import { recordsOf, type DnsRecord, type SendingHosts } from './dns-records';
import {
  SenderDomain,
  type DomainState,
  type RecordPurpose,
  type RecordState,
} from './schemas/sender-domain.schema';

/** The records a domain needs before mail is sent from it; return-path and tracking add features. */
const REQUIRED: RecordPurpose[] = ['dkim', 'spf', 'dmarc'];
/** The most domains one list answers (an operator has a handful per app). */
export const SENDER_DOMAINS_LIST_CAP = 1_000;
export const SENDER_DOMAIN_NOT_FOUND = 'Sender domain not found';

export interface VerifiedDomain extends SenderDomain {
  records: (DnsRecord & { state: RecordState })[];
}

/** Sender domains: their DKIM keys, the records to publish, and what DNS says of them. */
@Injectable()
export class SenderDomainsService {
  private readonly logger = new Logger('SenderDomains');
  private readonly hosts: SendingHosts;
  private readonly dnsServers: string[];
  private readonly overlapDays: number;

  constructor(
    @InjectModel(SenderDomain.name) private readonly domains: Model<SenderDomain>,
    @InjectModel(App.name) private readonly apps: Model<App>,
    private readonly keys: SecretKeys,
    config: ConfigService<AppConfig, true>,
  ) {
    this.hosts = {
      linkHost: new URL(config.get('PUBLIC_BASE_URL', { infer: true }) ?? 'http://localhost').hostname,
      spfInclude: config.get('SENDING_SPF_INCLUDE', { infer: true }),
    };
    this.dnsServers = config.get('DNS_SERVERS', { infer: true });
    this.overlapDays = config.get('DKIM_KEY_OVERLAP_DAYS', { infer: true });
  }

  recordsOf(domain: SenderDomain): DnsRecord[] {
    return recordsOf(domain, this.hosts);
  }

  /** A taken domain is a 409 through the unique index; an unknown app a 400 naming `appId`. */
  async create(domain: string, appId: string): Promise<SenderDomain> {
    if (!(await this.apps.exists({ id: appId }).exec())) {
      throw new BadRequestException('appId must name an existing app');
    }
    const dkim = await newDkimKey(this.keys.dkimKeySeal);
    const created = await this.domains.create({ domain, appId, dkim, state: 'pending' });
    return created.toObject();
  }

  list(): Promise<SenderDomain[]> {
    return this.domains
      .find()
      .sort({ domain: 1 })
      .limit(SENDER_DOMAINS_LIST_CAP)
      .lean<SenderDomain[]>()
      .exec();
  }

  require(id: string): Promise<SenderDomain> {
    return findByIdOr404(id, SENDER_DOMAIN_NOT_FOUND, (valid) =>
      this.domains.findById(valid).lean<SenderDomain>().exec(),
    );
  }

  /** Mail of the app falls back to its other domains, or to MAIL_FROM's, from the next message on. */
  async remove(id: string): Promise<string> {
    const removed = await findByIdOr404(id, SENDER_DOMAIN_NOT_FOUND, (valid) =>
      this.domains.findByIdAndDelete(valid).lean<SenderDomain>().exec(),
    );
    return removed.appId;
  }

  /**
   * Looks every record up and stores what it found. A domain that was verified and lost a required record
   * becomes `failed` with one warning: it is no longer a From domain nor signed for (sending-identities.ts
   * reads only verified domains).
   */
  async verify(id: string): Promise<VerifiedDomain> {
    const domain = await this.require(id);
    const resolver = senderDnsResolver(this.dnsServers);
    const records = this.recordsOf(domain);
    // A lookup that got no answer says nothing about the record: `unknown`, never `missing`.
    const states = await Promise.all(
      records.map((record) => checkRecord(resolver, record).catch((): RecordState => 'unknown')),
    );
    const checked = records.map((record, i) => ({ ...record, state: states[i] }));
    const next = checked.find((record) => record.key === 'next');
    // A rotation's key signs from the check that finds its record: the old one's record stays published.
    const now = new Date();
    const promoted = next?.state === 'verified' ? this.promoted(domain, now) : undefined;
    const keyStates: Record<string, RecordState> = {};
    const recordStates: Partial<Record<RecordPurpose, RecordState>> = {};
    for (const record of checked) {
      if (record.purpose !== 'dkim') recordStates[record.purpose] = record.state;
      else keyStates[record.name.split('.')[0]] = record.state;
    }
    recordStates.dkim = keyStates[(promoted?.dkim ?? domain.dkim).selector];
    const complete = REQUIRED.every((purpose) => recordStates[purpose] === 'verified');
    const unanswered = REQUIRED.some((purpose) => recordStates[purpose] === 'unknown');
    let state: DomainState = domain.state;
    if (complete) state = 'verified';
    else if (!unanswered && domain.state === 'verified') state = 'failed';
    if (unanswered) this.logger.warn(`Sender domain ${domain.domain}: the DNS servers did not answer`);
    if (domain.state === 'verified' && state === 'failed') {
      const lost = REQUIRED.filter((purpose) => recordStates[purpose] !== 'verified').join(', ');
      this.logger.warn(`Sender domain ${domain.domain} (app ${domain.appId}) lost its ${lost} record(s)`);
    }
    if (promoted)
      this.logger.log(`Sender domain ${domain.domain}: now signing with ${promoted.dkim.selector}`);
    const updated = await this.domains
      .findByIdAndUpdate(
        domain._id,
        {
          $set: { state, recordStates, keyStates, checkedAt: now, ...promoted },
          ...(promoted ? { $unset: { nextDkim: 1 } } : {}),
        },
        { returnDocument: 'after' },
      )
      .lean<SenderDomain>()
      .exec();
    if (!updated) throw new NotFoundException(SENDER_DOMAIN_NOT_FOUND);
    return { ...updated, records: promoted ? this.withStates(updated, keyStates, checked) : checked };
  }

  /**
   * A new key with a new selector beside the signing one (docs/operations/sending-domains.md "DKIM key
   * rotation"): mail stays signed with the old key until the new record is verified. A rotation that
   * still waits for its record is replaced by this one.
   */
  async rotateKey(id: string): Promise<SenderDomain> {
    const domain = await this.require(id);
    const nextDkim = await newDkimKey(this.keys.dkimKeySeal);
    const updated = await this.domains
      .findByIdAndUpdate(domain._id, { $set: { nextDkim } }, { returnDocument: 'after' })
      .lean<SenderDomain>()
      .exec();
    if (!updated) throw new NotFoundException(SENDER_DOMAIN_NOT_FOUND);
    return updated;
  }

  /** The keys once a rotation's key signs: the old one retires after DKIM_KEY_OVERLAP_DAYS. */
  private promoted(domain: SenderDomain, now: Date): Pick<SenderDomain, 'dkim' | 'previousDkim'> {
    const retiresAt = new Date(now.getTime() + this.overlapDays * 86_400_000);
    return { dkim: domain.nextDkim!, previousDkim: { ...domain.dkim, retiresAt } };
  }

  /** The records of a domain whose keys just moved, each with the state this check found. */
  private withStates(
    domain: SenderDomain,
    keyStates: Record<string, RecordState>,
    checked: (DnsRecord & { state: RecordState })[],
  ): (DnsRecord & { state: RecordState })[] {
    return this.recordsOf(domain).map((record) => ({
      ...record,
      state:
        record.purpose === 'dkim'
          ? (keyStates[record.name.split('.')[0]] ?? 'pending')
          : checked.find((found) => found.purpose === record.purpose)!.state,
    }));
  }

  /** The domains checked longest ago (the worker's periodic re-check). */
  async recheckOldest(olderThan: Date, limit: number): Promise<number> {
    const due = await this.domains
      // The filter is the service's own: `trusted` keeps sanitizeFilter from reading `$lt` as a value.
      .find({ checkedAt: trusted({ $lt: olderThan }) }, { _id: 1 })
      .sort({ checkedAt: 1 })
      .limit(limit)
      .lean<Pick<SenderDomain, '_id'>[]>()
      .exec();
    for (const { _id } of due) await this.verify(String(_id));
    return due.length;
  }
}
