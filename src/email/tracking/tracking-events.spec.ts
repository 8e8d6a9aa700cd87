import type { Model } from 'mongoose';
import type { EmailEvent } from './schemas/email-event.schema';
import { type TrackingEvent, TrackingEvents } from './tracking-events';

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
  return { model, stored, insertMany };
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
    const { model, stored } = scriptedCollection([
      () => {
        throw new Error('connection reset');
      },
    ]);
    const events = new TrackingEvents(model);
    events.record(event('p1'));
    events.record(event('p2'));
    await events.flush();
    expect(stored.size).toBe(0);
    await events.flush();
    expect(stored.size).toBe(2);
  });

  it('takes a retry refused only for duplicate ids as written, without requeueing', async () => {
    const { model, insertMany } = scriptedCollection([
      () => {
        throw Object.assign(new Error('E11000'), { writeErrors: [{ code: 11000 }, { code: 11000 }] });
      },
    ]);
    const events = new TrackingEvents(model);
    events.record(event('p1'));
    events.record(event('p2'));
    await events.flush();
    await events.flush();
    expect(insertMany).toHaveBeenCalledTimes(1);
  });
});
