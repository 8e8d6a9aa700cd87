import { Injectable } from '@nestjs/common';
import { JobHandlers } from '../../queue/job-handlers';
import { CLICK_TARGETS, type LinkTableSource } from '../jobs/email-handlers';
import { redirectTarget } from './redirect-target';

/** Link tables kept in memory: they never change once a campaign is sent, and clicks come in bursts. */
const CACHE_SIZE = 1_000;

/**
 * Where a click goes: the URL stored with the campaign's link table, never one from the token or the query.
 * The newsletter module owns campaigns and marks its lookup `@ClickTargetSource()`, so the e-mail engine
 * does not depend on it. Tables are stored normalised; those stored before that was the rule are normalised
 * here, once per table read, and a link that cannot be (no URL, or not one a `Location` header can carry)
 * is not followed: the click is answered like an unknown link, never with a broken header.
 */
@Injectable()
export class ClickTargets {
  private readonly cache = new Map<string, readonly (string | null)[]>();

  constructor(private readonly handlers: JobHandlers) {}

  async urlOf(campaignId: string, linkIndex: number, test = false): Promise<string | null> {
    // A test copy's links are a draft's, which may change: read each time (a tester clicks a few).
    if (test) {
      const source = this.handlers.get<LinkTableSource>(CLICK_TARGETS, 'campaign');
      const link = (await source?.(campaignId, { draft: true }))?.[linkIndex];
      return link === undefined ? null : redirectTarget(link);
    }
    let links = this.cache.get(campaignId);
    if (!links) {
      const source = this.handlers.get<LinkTableSource>(CLICK_TARGETS, 'campaign');
      const found = (await source?.(campaignId)) ?? null;
      if (!found) return null;
      links = found.map((link) => redirectTarget(link));
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(campaignId, links);
    }
    return links[linkIndex] ?? null;
  }
}
