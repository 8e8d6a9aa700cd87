import { Injectable, Module } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import { MongoNetworkError } from 'mongodb';
import type { Model } from 'mongoose';
import { INTERRUPTED_AFTER_MS, ContactErasureSweep } from '../src/contacts/contact-erasure-sweep';
import { ContactEvents } from '../src/contacts/contact.events';
import { ContactsService } from '../src/contacts/contacts.service';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { dataMigrations } from '../src/database/migrations';
import { runMigration } from '../src/database/migrations/data-migration';
import { EmailService } from '../src/email/email.service';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';

/** Fails the erasure's listeners as the test says: a crash, or a lost connection (as in an election). */
@Injectable()
class ErasureFault {
  static next: 'crash' | 'network' | null = null;

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  onContactErased(): void {
    const fault = ErasureFault.next;
    ErasureFault.next = null;
    if (fault === 'crash') throw new Error('worker killed mid-erasure');
    if (fault === 'network') throw new MongoNetworkError('connection 7 to primary closed');
  }
}

@Module({ providers: [ErasureFault] })
class ErasureFaultModule {}

/**
 * GDPR erasure at production size: every store is found through an index on a lower-cased address (no
 * case-insensitive pattern, no scan), addresses written before the change are lower-cased by the data
 * migrations of `npm run db:indexes`, and an erasure interrupted half-way is finished: at once after a
 * transient failure, by the sweep after a crash.
 */
describe('GDPR erasure by indexed addresses, resumable', () => {
  let t: TestApp;
  let admin: Session;
  let appId: string;
  let contacts: Model<Contact>;
  let people: ContactsService;
  let email: EmailService;
  const address = 'ada.lovelace@example.com';

  beforeAll(async () => {
    t = await createTestApp({ imports: [ErasureFaultModule] });
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    people = t.app.get(ContactsService);
    email = t.app.get(EmailService);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ErasureFault.next = null;
    admin = await createSession(t);
    appId = (await seedApp(t)).id;
  });

  const db = () => t.connection.db!;
  const personId = async () => {
    const { contact } = await people.signUp({ appId, email: address, source: 'joinlist' });
    return String(contact._id);
  };

  /** A ticket, a thread message, feedback, a want and a plan naming the address in mixed case. */
  async function seedMixedCase(): Promise<{ ticketId: string }> {
    const ticket = await admin.http.post(`/${appId}/tickets`, {
      email: 'ADA.Lovelace@Example.com',
      subject: 'Broken',
      message: 'It broke',
    });
    expect(ticket.status).toBe(201);
    const ticketId = ticket.body.data._id as string;
    const reply = await admin.http.post(`/${appId}/tickets/${ticketId}/messages`, {
      content: 'Any news?',
      isCustomer: true,
      authorEmail: 'Ada.LOVELACE@example.com',
      authorName: 'Ada',
    });
    expect(reply.status).toBe(201);
    const feedback = await t.http.post(`/${appId}/feedback`, {
      type: 'praise',
      subject: 'Great',
      message: 'Love it',
      email: 'Ada.Lovelace@EXAMPLE.com',
    });
    expect(feedback.status).toBe(201);
    const key = await seedApiKey(t, appId);
    const want = await t.http.post(
      `/${appId}/wants`,
      { title: 'Dark mode', description: 'Please', category: 'ui', authorEmail: 'ADA.LOVELACE@EXAMPLE.COM' },
      { headers: { 'x-api-key': key.value } },
    );
    expect(want.status).toBe(201);
    await email.enqueueBatchPlan(
      {
        kind: 'recipients',
        appId,
        message: { subject: 'News', text: 'News' },
        recipients: [{ to: 'bob@example.com' }, { to: 'Ada.Lovelace@Example.COM' }],
      },
      { scheduledAt: new Date(Date.now() + 3_600_000) },
    );
    return { ticketId };
  }

  /** Every stored document that still names the address, in any case, by collection. */
  async function stillNamed(): Promise<Record<string, number>> {
    const found: Record<string, number> = {};
    for (const name of ['tickets', 'feedback', 'wants', 'email_jobs']) {
      const docs = await db().collection(name).find().toArray();
      const count = docs.filter((doc) => JSON.stringify(doc).toLowerCase().includes(address)).length;
      if (count) found[name] = count;
    }
    return found;
  }

  it('stores addresses lower-cased and finds them all, whatever case they were given in', async () => {
    const id = await personId();
    await seedMixedCase();
    expect(await stillNamed()).toEqual({ tickets: 1, feedback: 1, wants: 1, email_jobs: 1 });
    const [thread] = await db().collection('tickets').find().toArray();
    expect((thread.messages as { authorEmail?: string }[]).map((m) => m.authorEmail)).toContain(address);

    expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(200);
    expect(await stillNamed()).toEqual({});
  });

  it('finds what was stored before the change once the data migrations have lower-cased it', async () => {
    const id = await personId();
    const { ticketId } = await seedMixedCase();
    // As an older release stored them: feedback, want, thread author and plan recipient as typed.
    const { ObjectId } = await import('mongodb');
    await db()
      .collection('feedback')
      .updateMany({}, { $set: { email: 'Ada.Lovelace@Example.com' } });
    await db()
      .collection('wants')
      .updateMany({}, { $set: { authorEmail: 'ADA.lovelace@example.com' } });
    await db()
      .collection('tickets')
      .updateOne(
        { _id: new ObjectId(ticketId) },
        { $set: { 'messages.$[m].authorEmail': 'Ada.Lovelace@EXAMPLE.com' } },
        { arrayFilters: [{ 'm.authorEmail': address }] },
      );
    await db()
      .collection('email_jobs')
      .updateMany(
        { type: 'email.batch.plan' },
        { $set: { 'payload.recipients.1.to': ' Ada.Lovelace@Example.COM' } },
      );

    const lines: string[] = [];
    for (const migration of dataMigrations({ emailEventRetentionMs: 86_400_000 })) {
      await runMigration(db(), migration, (line) => lines.push(line));
    }
    expect(lines).toEqual(
      expect.arrayContaining([
        '  2026-11-lower-case-feedback-email: 1 read, 1 changed, done',
        '  2026-11-lower-case-want-author-email: 1 read, 1 changed, done',
        '  2026-11-lower-case-ticket-message-authors: 1 read, 1 changed, done',
      ]),
    );

    expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(200);
    expect(await stillNamed()).toEqual({});
  });

  it('retries the erasure after a transient failure (a lost connection) instead of failing it', async () => {
    const id = await personId();
    await seedMixedCase();
    ErasureFault.next = 'network';
    expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(200);
    expect(await stillNamed()).toEqual({});
    const erased = await contacts.findById(id).lean<Contact>().orFail().exec();
    expect(erased.deletedAt).toBeInstanceOf(Date);
    expect(erased.erasureStartedAt).toBeUndefined();
  });

  it('finishes an erasure that a crash stopped half-way, without anyone sending the delete again', async () => {
    const id = await personId();
    await seedMixedCase();
    ErasureFault.next = 'crash';
    expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(500);
    const interrupted = await contacts.findById(id).lean<Contact>().orFail().exec();
    expect(interrupted.deletedAt).toBeNull();
    expect(interrupted.erasureStartedAt).toBeInstanceOf(Date);
    expect(interrupted.erasureActor).toBe(admin.user.email);

    const sweep = t.app.get(ContactErasureSweep);
    // Too early: the delete might still be running.
    expect(await sweep.resumeInterrupted(new Date())).toBe(0);
    const later = new Date(Date.now() + INTERRUPTED_AFTER_MS + 60_000);
    expect(await sweep.resumeInterrupted(later)).toBe(1);

    const erased = await contacts.findById(id).lean<Contact>().orFail().exec();
    expect(erased.deletedAt).toBeInstanceOf(Date);
    expect(erased.email).not.toContain('ada');
    expect(erased.erasureStartedAt).toBeUndefined();
    expect(await stillNamed()).toEqual({});
    // Nothing left to finish.
    expect(await sweep.resumeInterrupted(later)).toBe(0);
  });
});
