import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LinkTokens } from '../../common/crypto/link-token';
import type { AppConfig } from '../../config/env';

/** What an open token names: one message, i.e. one campaign sent to one person. */
export interface OpenTarget {
  campaignId: string;
  contactId: string;
  /** The campaign's app (recorded with the event without a lookup). */
  appId: string;
  /** A test copy's link: followed like the real one, never recorded (docs/api/newsletters.md). */
  test?: boolean;
}

/** The last field of a test copy's tokens. */
const TEST_FIELD = 'test';
const testField = (target: OpenTarget) => (target.test ? [TEST_FIELD] : []);

/** What a click token names: the message and the index of the link in the campaign's link table. */
export interface ClickTarget extends OpenTarget {
  linkIndex: number;
}

/**
 * Open-pixel and click-redirect URLs of campaign mail (docs/architecture.md "Tracking"): signed tokens of
 * purpose `open` and `click` naming the campaign, the person, the app and (clicks) the link index, at
 * `<base>/o/{token}.gif` and `<base>/c/{token}`, the base being the app's link domain or PUBLIC_BASE_URL.
 * A token never carries a URL: the redirect
 * target comes from the campaign.
 */
@Injectable()
export class TrackingLinks {
  private readonly baseUrl: string;

  constructor(
    private readonly tokens: LinkTokens,
    config: ConfigService<AppConfig, true>,
  ) {
    this.baseUrl = config.get('publicBaseUrl', { infer: true });
  }

  /** `base`: the app's link domain (LinkDomains.baseUrlOf), PUBLIC_BASE_URL when absent. */
  openUrl(target: OpenTarget, base = this.baseUrl): string {
    const fields = [target.campaignId, target.contactId, target.appId, ...testField(target)];
    return `${base}/o/${this.tokens.sign('open', fields)}.gif`;
  }

  clickUrl(target: ClickTarget, base = this.baseUrl): string {
    const fields = [
      target.campaignId,
      target.contactId,
      target.appId,
      String(target.linkIndex),
      ...testField(target),
    ];
    return `${base}/c/${this.tokens.sign('click', fields)}`;
  }

  /** The target of a genuine open token (with or without `.gif`), or null. */
  readOpen(token: string): OpenTarget | null {
    const fields = this.tokens.verify('open', token.endsWith('.gif') ? token.slice(0, -4) : token);
    if (!fields || !(fields.length === 3 || (fields.length === 4 && fields[3] === TEST_FIELD))) return null;
    const [campaignId, contactId, appId] = fields;
    return { campaignId, contactId, appId, ...(fields.length === 4 ? { test: true } : {}) };
  }

  readClick(token: string): ClickTarget | null {
    const fields = this.tokens.verify('click', token);
    const test = fields?.length === 5 && fields[4] === TEST_FIELD;
    if (!fields || !(fields.length === 4 || test) || !/^\d{1,6}$/.test(fields[3])) return null;
    const [campaignId, contactId, appId, index] = fields;
    return { campaignId, contactId, appId, linkIndex: Number(index), ...(test ? { test } : {}) };
  }
}

/** The message id recorded with tracking events: the campaign message's idempotency key. */
export function campaignMessageId(campaignId: string, contactId: string): string {
  return `campaign:${campaignId}:${contactId}`;
}
