import { ReplayWindow } from './replay-window';
import type { TrackingEvent } from './tracking-events';
import { DEFAULT_TRACKING_LIMITS } from './tracking-limits';

const T0 = 1_700_000_000_000;
const WINDOW = DEFAULT_TRACKING_LIMITS.replayWindowMs;

const open = (contactId: string, ms: number, automated = false): TrackingEvent => ({
  appId: 'app',
  contactId,
  messageId: `campaign:c:${contactId}`,
  campaignId: 'c',
  provider: 'tracking',
  type: 'opened',
  userAgent: null,
  automated,
  createdAt: new Date(T0 + ms),
});
const click = (contactId: string, ms: number, linkIndex: number): TrackingEvent => ({
  ...open(contactId, ms),
  type: 'clicked',
  linkIndex,
});

describe('ReplayWindow', () => {
  it('admits one open per message per window, from the time of the first', () => {
    const window = new ReplayWindow(DEFAULT_TRACKING_LIMITS);
    expect(window.admits(open('p1', 0))).toBe(true);
    expect(window.admits(open('p1', 1))).toBe(false);
    expect(window.admits(open('p1', WINDOW - 1))).toBe(false);
    expect(window.admits(open('p2', WINDOW - 1))).toBe(true);
    expect(window.admits(open('p1', WINDOW))).toBe(true);
    expect(window.admits(open('p1', WINDOW + 1))).toBe(false);
  });

  it('keeps human and automated requests, and each link of a message, apart', () => {
    const window = new ReplayWindow(DEFAULT_TRACKING_LIMITS);
    expect(window.admits(open('p1', 0, true))).toBe(true);
    expect(window.admits(open('p1', 10))).toBe(true);
    expect(window.admits(click('p1', 20, 0))).toBe(true);
    expect(window.admits(click('p1', 30, 1))).toBe(true);
    expect(window.admits(click('p1', 40, 0))).toBe(false);
  });

  it('admits every other event', () => {
    const window = new ReplayWindow(DEFAULT_TRACKING_LIMITS);
    const sent = { ...open('p1', 0), type: 'sent' as const, provider: 'smtp' };
    expect(window.admits(sent)).toBe(true);
    expect(window.admits(sent)).toBe(true);
  });

  it('holds at most windowEntries, forgetting the oldest first', () => {
    const window = new ReplayWindow({ ...DEFAULT_TRACKING_LIMITS, windowEntries: 3 });
    for (const contactId of ['a', 'b', 'c', 'd']) expect(window.admits(open(contactId, 0))).toBe(true);
    // `a` was forgotten to make room for `d`; `c` and `d` are still held.
    expect(window.admits(open('a', 1))).toBe(true);
    expect(window.admits(open('c', 1))).toBe(false);
    expect(window.admits(open('d', 1))).toBe(false);
  });
});
