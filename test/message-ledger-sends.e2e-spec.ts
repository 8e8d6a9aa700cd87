import { getModelToken } from '@nestjs/mongoose';
import { ObjectId } from 'mongodb';
import type { Model } from 'mongoose';
import { type LedgerMessage, MessageLedger } from '../src/email/jobs/message-ledger';
import { MessageLedgerEntry } from '../src/email/jobs/schemas/message-ledger.schema';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';

/**
 * The worker's recorded sends complete their ledger entries in one update for the batch; the sends it does
 * not find as queued (an entry lost, another Message-ID) still end complete.
 */
describe('Message ledger: recording a batch of sends', () => {
  let t: TestApp;
  let ledger: MessageLedger;
  let entries: Model<MessageLedgerEntry>;

  beforeAll(async () => {
    process.env.MAIL_FROM = 'News <news@mail.example.com>';
    t = await createTestApp();
    ledger = t.app.get(MessageLedger);
    entries = t.app.get<Model<MessageLedgerEntry>>(getModelToken(MessageLedgerEntry.name));
  });
  afterAll(() => t.close());
  beforeEach(() => resetDatabase(t.connection));

  const messageOf = (to: string): LedgerMessage => ({
    jobId: new ObjectId(),
    idempotencyKey: `key:${to}`,
    to,
    appId: 'app',
    campaignId: 'campaign',
    contactId: null,
    stream: 'broadcast',
  });
  const messageIdOf = (message: LedgerMessage) => `${String(message.jobId)}@mail.example.com`;

  it('completes queued entries, creates a lost one and keeps each Message-ID', async () => {
    const queued = [messageOf('a@example.com'), messageOf('b@example.com'), messageOf('c@example.com')];
    const queuedAt = new Date(Date.now() - 60_000);
    await ledger.recordQueued(queued, queuedAt);
    const lost = messageOf('lost@example.com');
    const sentAt = new Date();
    await ledger.recordSent(
      [
        { message: queued[0], messageId: messageIdOf(queued[0]), provider: 'smtp' },
        { message: queued[1], messageId: messageIdOf(queued[1]), provider: 'api' },
        // Sent under another sender domain than it was queued with.
        { message: queued[2], messageId: `${String(queued[2].jobId)}@other.example.com`, provider: 'smtp' },
        { message: lost, messageId: messageIdOf(lost), provider: 'smtp' },
      ],
      sentAt,
    );
    const byTo = new Map(
      (await entries.find().lean<MessageLedgerEntry[]>().exec()).map((entry) => [entry.to, entry]),
    );
    expect(byTo.size).toBe(4);
    const sent = { sentAt, lastEventAt: sentAt };
    expect(byTo.get('a@example.com')).toMatchObject({
      ...sent,
      provider: 'smtp',
      messageId: messageIdOf(queued[0]),
      createdAt: queuedAt,
    });
    expect(byTo.get('b@example.com')).toMatchObject({
      ...sent,
      provider: 'api',
      messageId: messageIdOf(queued[1]),
    });
    expect(byTo.get('c@example.com')).toMatchObject({
      ...sent,
      provider: 'smtp',
      messageId: `${String(queued[2].jobId)}@other.example.com`,
    });
    expect(byTo.get('lost@example.com')).toMatchObject({
      ...sent,
      provider: 'smtp',
      messageId: messageIdOf(lost),
      idempotencyKey: 'key:lost@example.com',
      appId: 'app',
      campaignId: 'campaign',
      createdAt: sentAt,
    });
  });

  it('records the same sends twice without a change (a retried outcome write)', async () => {
    const message = messageOf('again@example.com');
    await ledger.recordQueued([message]);
    const sends = [{ message, messageId: messageIdOf(message), provider: 'smtp' }];
    const sentAt = new Date();
    await ledger.recordSent(sends, sentAt);
    await ledger.recordSent(sends, sentAt);
    expect(await entries.countDocuments().exec()).toBe(1);
    expect(await entries.findById(message.jobId).lean<MessageLedgerEntry>().exec()).toMatchObject({
      sentAt,
      provider: 'smtp',
    });
  });
});
