import type { KeyObject } from 'node:crypto';
import { BadRequestException, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { AppConfig } from '../config/env';
import { SecretKeys } from '../config/secret-keys';
import { formatAddress } from '../email/delivery/message-headers';
import { App, type AppSender } from '../apps/schemas/app.schema';
import { openDkimKey } from './dkim-keys';
import { RETURN_PATH_LABEL } from './dns-records';
import { SenderDomain } from './schemas/sender-domain.schema';

/** How a message leaves: its From and Reply-To, the domain of its Message-ID, envelope and signature. */
export interface SendingIdentity {
  from: string;
  replyTo?: string;
  /** The From domain when the app may send from it, else MAIL_FROM's. */
  domain: string;
  /** The return-path host's bounce address, when its record is verified. */
  envelopeFrom?: string;
  dkim?: { domainName: string; keySelector: string; privateKey: KeyObject };
}

interface SigningDomain {
  keySelector: string;
  privateKey: KeyObject;
  returnPath: boolean;
}

interface AppSending {
  sender?: AppSender;
  domains: Map<string, SigningDomain>;
  readAt: number;
}

/**
 * How long a worker keeps an app's sender and verified domains: a campaign's thousand messages cost one
 * read, and a domain that fails its re-check stops signing within this time on every instance.
 */
const CACHE_MS = 30_000;

/** The domain of `Name <user@domain>` or `user@domain`, lower-cased; '' without one. */
export const domainOfAddress = (address: string): string =>
  /@([A-Za-z0-9.-]+)>?\s*$/.exec(address.trim())?.[1].toLowerCase() ?? '';

/** Whether mail from `domain` aligns with `base` (relaxed DMARC alignment: the domain or a subdomain). */
export const isOnDomain = (domain: string, base: string): boolean =>
  domain === base || domain.endsWith(`.${base}`);

/**
 * Who an app's mail is from (docs/operations/sending-domains.md): the message's own From, else its
 * template's sender, else the app's sender, else MAIL_FROM. A From on a domain the app has verified is
 * signed with that domain's key; a From on a domain it may no longer use falls back to MAIL_FROM.
 */
@Injectable()
export class SendingIdentities {
  private readonly defaultFrom: string;
  private readonly defaultDomain: string;
  private readonly cache = new Map<string, AppSending>();

  constructor(
    @InjectModel(SenderDomain.name) private readonly domains: Model<SenderDomain>,
    @InjectModel(App.name) private readonly apps: Model<App>,
    private readonly keys: SecretKeys,
    config: ConfigService<AppConfig, true>,
  ) {
    this.defaultFrom = config.get('MAIL_FROM', { infer: true });
    this.defaultDomain = domainOfAddress(this.defaultFrom) || 'localhost';
  }

  async resolve(
    appId: string | null | undefined,
    chosen: { from?: string; replyTo?: string; templateSender?: { name?: string; email: string } },
  ): Promise<SendingIdentity> {
    const app = appId ? await this.sendingOf(appId) : undefined;
    const from =
      chosen.from ??
      (chosen.templateSender ? formatAddress(chosen.templateSender) : undefined) ??
      (app?.sender ? formatAddress(app.sender) : this.defaultFrom);
    const replyTo = chosen.replyTo ?? app?.sender?.replyTo;
    const domain = domainOfAddress(from);
    const base = app && [...app.domains.keys()].find((verified) => isOnDomain(domain, verified));
    const signing = base ? app.domains.get(base) : undefined;
    if (base && signing) {
      return {
        from,
        replyTo,
        domain,
        envelopeFrom: signing.returnPath ? `bounces@${RETURN_PATH_LABEL}.${base}` : undefined,
        dkim: { domainName: base, keySelector: signing.keySelector, privateKey: signing.privateKey },
      };
    }
    if (isOnDomain(domain, this.defaultDomain)) return { from, replyTo, domain };
    return { from: this.defaultFrom, replyTo, domain: this.defaultDomain };
  }

  /** 400 naming `field` unless `email` is on a verified domain of the app or on MAIL_FROM's domain. */
  async assertMayUse(appId: string | null | undefined, email: string, field: string): Promise<void> {
    const domain = domainOfAddress(email);
    if (isOnDomain(domain, this.defaultDomain)) return;
    const verified = appId
      ? await this.domains.find({ appId, state: 'verified' }, { domain: 1 }).lean<SenderDomain[]>().exec()
      : [];
    if (verified.some((candidate) => isOnDomain(domain, candidate.domain))) return;
    throw new BadRequestException(
      `${field} must be on a verified sender domain of the app or on ${this.defaultDomain}`,
    );
  }

  /** Drops what this instance remembers of an app (its sender or domains changed here). */
  forget(appId: string): void {
    this.cache.delete(appId);
  }

  private async sendingOf(appId: string): Promise<AppSending> {
    const cached = this.cache.get(appId);
    if (cached && Date.now() - cached.readAt < CACHE_MS) return cached;
    const [app, verified] = await Promise.all([
      this.apps.findOne({ id: appId }, { sender: 1 }).lean<Pick<App, 'sender'>>().exec(),
      this.domains.find({ appId, state: 'verified' }).lean<SenderDomain[]>().exec(),
    ]);
    const domains = new Map<string, SigningDomain>();
    for (const domain of verified) {
      domains.set(domain.domain, {
        keySelector: domain.dkim.selector,
        privateKey: openDkimKey(domain.dkim, this.keys.dkimKeySeal),
        returnPath: domain.recordStates?.['return-path'] === 'verified',
      });
    }
    const sending = { sender: app?.sender ?? undefined, domains, readAt: Date.now() };
    this.cache.set(appId, sending);
    return sending;
  }
}
