import type { Model } from 'mongoose';
import type { AnalyticsCounters } from '../events/analytics-counters';
import { EmailEventLedger } from '../events/email-event-ledger';
import { EventRetention } from '../events/event-retention';
import { ReplayWindow } from './replay-window';
import type { EmailEvent } from './schemas/email-event.schema';
import type { TrackedMessages } from './tracked-messages';
import { type TrackingEvent, TrackingEvents } from './tracking-events';
import { DEFAULT_TRACKING_LIMITS } from './tracking-limits';

/** A collection whose inserts follow a script: the buffer's retry logic, without a database. */
function scriptedCollection(script: ((docs: { _id: unknown }[]) => void)[]) {
  const stored = new Map<string, unknown>();
  const insertMany = jest.fn((docs: { _id: unknown }[]) => {
    const step = script.shift();
    if (step) step(docs);
    else for (const doc of docs) stored.set(String(doc._id), doc);
    return Promise.resolve();
  });
  const model = { collection: { insertMany } } as unknown as Model<EmailEvent>;
  const countOrLog = jest.fn((events: { _id: unknown }[]) => {
    counted.push(...events.map((e) => String(e._id)));
    return Promise.resolve();
  });
  const counted: string[] = [];
  const ledger = new EmailEventLedger(
    model,
    { countOrLog } as unknown as AnalyticsCounters,
    EventRetention.ofDays(400),
  );
  return { ledger, stored, insertMany, counted };
}

/** The buffer with the real replay window and a per-message cap that admits everything (or as told). */
function buffer(
  ledger: EmailEventLedger,
  admit = (events: TrackingEvent[]): Promise<TrackingEvent[]> => Promise.resolve(events),
) {
  const messages = { admit: jest.fn(admit) } as unknown as TrackedMessages;
  return new TrackingEvents(ledger, new ReplayWindow(DEFAULT_TRACKING_LIMITS), messages);
}

const event = (contactId: string): TrackingEvent => ({
  appId: 'app',
  contactId,
  messageId: `campaign:c:${contactId}`,
  campaignId: 'c',
  provider: 'tracking',
  type: 'opened',
  userAgent: null,
  automated: false,
  createdAt: new Date(),
});

describe('TrackingEvents', () => {
  it('keeps a batch the database refused and writes it with the next flush', async () => {
    const { ledger, stored, counted } = scriptedCollection([
      () => {
        throw new Error('connection reset');
      },
    ]);
    const events = buffer(ledger);
    events.record(event('p1'));
    events.record(event('p2'));
    await events.flush();
    expect(stored.size).toBe(0);
    await events.flush();
    expect(stored.size).toBe(2);
    expect(counted).toHaveLength(2);
  });

  it('counts the events a partly refused batch did write, and not again when the retry finds them', async () => {
    const { ledger, stored, counted } = scriptedCollection([
      (docs) => {
        stored.set(String(docs[0]._id), docs[0]);
        throw Object.assign(new Error('disk full'), { writeErrors: [{ code: 14031, index: 1 }] });
      },
      (docs) => {
        stored.set(String(docs[1]._id), docs[1]);
        throw Object.assign(new Error('E11000'), { writeErrors: [{ code: 11000, index: 0 }] });
      },
    ]);
    const events = buffer(ledger);
    events.record(event('p1'));
    events.record(event('p2'));
    await events.flush();
    expect(counted).toHaveLength(1);
    await events.flush();
    expect(stored.size).toBe(2);
    expect(counted).toHaveLength(2);
    expect(new Set(counted).size).toBe(2);
  });

  it('works out deferred events when it writes, in the order they came, and records nothing for null', async () => {
    const { ledger, stored } = scriptedCollection([]);
    const events = buffer(ledger);
    const resolve = jest.fn((contactId: string | null) => (contactId ? event(contactId) : null));
    events.recordLater(() => resolve('p1'));
    events.recordLater(() => resolve(null));
    expect(resolve).not.toHaveBeenCalled();
    events.record(event('p2'));
    events.recordLater(() => resolve('p3'));
    await events.flush();
    expect(resolve).toHaveBeenCalledTimes(3);
    expect([...stored.values()].map((doc) => (doc as TrackingEvent).contactId)).toEqual(['p1', 'p2', 'p3']);
  });

  it('works deferred events out 500 at a time, so forged ones never pile up', async () => {
    const { ledger, insertMany } = scriptedCollection([]);
    const events = buffer(ledger);
    const forged = jest.fn(() => null);
    for (let i = 0; i < 1_250; i += 1) events.recordLater(forged);
    expect(forged).toHaveBeenCalledTimes(1_000);
    await events.flush();
    expect(forged).toHaveBeenCalledTimes(1_250);
    expect(insertMany).not.toHaveBeenCalled();
  });

  it('counts a deferred event that throws as lost and still writes the others of its batch', async () => {
    const { ledger, stored } = scriptedCollection([]);
    const events = buffer(ledger);
    events.recordLater(() => event('p1'));
    events.recordLater(() => {
      throw new Error('broken');
    });
    events.recordLater(() => event('p3'));
    await expect(events.flush()).resolves.toBeUndefined();
    expect([...stored.values()].map((doc) => (doc as TrackingEvent).contactId)).toEqual(['p1', 'p3']);
  });

  it('takes a retry refused only for duplicate ids as written, without requeueing', async () => {
    const { ledger, insertMany, counted } = scriptedCollection([
      () => {
        throw Object.assign(new Error('E11000'), {
          writeErrors: [
            { code: 11000, index: 0 },
            { code: 11000, index: 1 },
          ],
        });
      },
    ]);
    const events = buffer(ledger);
    events.record(event('p1'));
    events.record(event('p2'));
    await events.flush();
    await events.flush();
    expect(insertMany).toHaveBeenCalledTimes(1);
    expect(counted).toHaveLength(0);
  });

  it('leaves out an open repeated within the window, recorded or deferred; a later one counts again', async () => {
    const { ledger, stored } = scriptedCollection([]);
    const events = buffer(ledger);
    const at = (ms: number) => ({ ...event('p1'), createdAt: new Date(1_700_000_000_000 + ms) });
    events.record(at(0));
    events.recordLater(() => at(1_000));
    events.record({ ...at(2_000), automated: true });
    events.recordLater(() => at(DEFAULT_TRACKING_LIMITS.replayWindowMs));
    events.record(event('p2'));
    await events.flush();
    const written = [...stored.values()] as TrackingEvent[];
    expect(written.map((e) => [e.contactId, e.automated])).toEqual([
      ['p1', false],
      ['p1', true],
      ['p1', false],
      ['p2', false],
    ]);
  });

  it('writes only the events the per-message cap admits, and puts back only those after a failure', async () => {
    const { ledger, stored } = scriptedCollection([
      () => {
        throw new Error('connection reset');
      },
    ]);
    const contacts = (batch: unknown[]) => batch.map((e) => (e as TrackingEvent).contactId);
    const admit = jest.fn((batch: TrackingEvent[]) =>
      Promise.resolve(batch.filter((e) => e.contactId !== 'p1')),
    );
    const events = buffer(ledger, admit);
    events.record(event('p1'));
    events.record(event('p2'));
    events.record(event('p3'));
    await events.flush();
    await events.flush();
    expect(admit.mock.calls.map(([batch]) => contacts(batch))).toEqual([
      ['p1', 'p2', 'p3'],
      ['p2', 'p3'],
    ]);
    expect(contacts([...stored.values()])).toEqual(['p2', 'p3']);
  });
});
