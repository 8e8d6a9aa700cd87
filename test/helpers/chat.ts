import { getModelToken } from '@nestjs/mongoose';
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { trusted, type Model } from 'mongoose';
import { ChatDeliveryWorker } from '../../src/chat/delivery/chat-delivery.worker';
import type { ChatDeliveryOptions } from '../../src/chat/delivery/delivery-options';
import { HostResolver } from '../../src/chat/delivery/host-resolver';
import { ChatNotification } from '../../src/chat/schemas/chat-notification.schema';
import type { TestApp } from './app';
import { SAFETY_DEADLINE_MS } from './wait';

/** Production's delivery policy with short waits, so retries and timeouts run within a test. */
export const testDeliveryOptions = (overrides: Partial<ChatDeliveryOptions> = {}): ChatDeliveryOptions => ({
  timeoutMs: 5_000,
  maxAttempts: 4,
  backoff: { baseMs: 50, maxMs: 200 },
  leaseMs: 60_000,
  scanSize: 100,
  concurrency: 5,
  ...overrides,
});

export const chatOutbox = (t: TestApp) =>
  t.app.get<Model<ChatNotification>>(getModelToken(ChatNotification.name));

/** The outbox's notifications matching `filter`, oldest first. */
export const notifications = (t: TestApp, filter: Record<string, unknown> = {}) =>
  chatOutbox(t).find(filter).sort({ createdAt: 1, _id: 1 }).lean<ChatNotification[]>().exec();

/**
 * Waits until `count` notifications match `filter`: producers store them after the request that caused
 * them has answered.
 */
export async function waitForNotifications(
  t: TestApp,
  count: number,
  filter: Record<string, unknown> = {},
  timeoutMs = SAFETY_DEADLINE_MS,
): Promise<ChatNotification[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await notifications(t, filter);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`${found.length} of ${count} notification(s) stored`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A wait before a retry longer than any run (`options.backoff`): a run scans again while it finds work, so a
 * retry that fell due meanwhile would be made in the same run on a slow machine, and a test that expects
 * one failed attempt would see two. `makeRetriesDue` then ends that wait, as the clock would.
 */
export const RETRY_WAIT_MS = { baseMs: 60_000, maxMs: 60_000 };

/** Makes every failed notification due now, as the end of its wait before a retry would. */
export const makeRetriesDue = (t: TestApp) =>
  chatOutbox(t)
    .updateMany({ status: 'failed' }, { $set: { nextAttemptAt: new Date() } })
    .exec();

/** Runs the delivery worker until nothing is due or waiting for a retry. */
export async function drainChat(t: TestApp, deadlineMs = SAFETY_DEADLINE_MS): Promise<void> {
  const worker = t.app.get(ChatDeliveryWorker);
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    await worker.processDue();
    const open = await chatOutbox(t)
      .countDocuments({ status: trusted({ $in: ['pending', 'processing', 'failed'] }) })
      .exec();
    if (open === 0) return;
    if (Date.now() > deadline) throw new Error(`${open} notification(s) still open after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A resolver for tests: names in `hosts` resolve to the addresses given there (a function may answer
 * differently on each call), other names as the system resolves them.
 */
export class TestResolver extends HostResolver {
  readonly lookups: string[] = [];

  constructor(readonly hosts: Record<string, string[] | (() => string[])> = {}) {
    super();
  }

  override async lookupAll(hostname: string): Promise<LookupAddress[]> {
    this.lookups.push(hostname);
    const entry = this.hosts[hostname];
    if (!entry) return lookup(hostname, { all: true, verbatim: true });
    const addresses = typeof entry === 'function' ? entry() : entry;
    return addresses.map((address) => ({ address, family: isIP(address) }));
  }
}
