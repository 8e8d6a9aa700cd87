import { getModelToken } from '@nestjs/mongoose';
import { BSON } from 'mongodb';
import { type Model, Types } from 'mongoose';
import { ArchivedConsentEvent } from '../src/contacts/schemas/archived-consent-event.schema';
import {
  CONSENT_HISTORY_WINDOW,
  type ConsentEvent,
  Contact,
  REASON_MAX,
} from '../src/contacts/schemas/contact.schema';
import {
  MAX_MESSAGES_PER_TICKET,
  MESSAGE_MAX_LENGTH,
  THREAD_MAX_BYTES,
  type TicketMessage,
} from '../src/tickets/schemas/ticket.schema';
import { threadEntryBytes } from '../src/tickets/tickets.service';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { type FilePart, multipart } from './helpers/multipart';
import { createSessions, Session } from './helpers/session';
import { ticketModel } from './helpers/tickets';

/** MongoDB refuses a document larger than this (the dev database has no such limit). */
const MONGODB_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** One character to the validators, four bytes in UTF-8: the worst encoding of a length limit. */
const WIDE = '😀';
const wide = (characters: number) => WIDE.repeat(characters);

describe('Bounded documents', () => {
  let t: TestApp;
  let admin: Session;
  let user: Session;
  let appId: string;
  let contacts: Model<Contact>;
  let archive: Model<ArchivedConsentEvent>;

  beforeAll(async () => {
    t = await createTestApp();
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    archive = t.app.get<Model<ArchivedConsentEvent>>(getModelToken(ArchivedConsentEvent.name));
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin, user } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const rawContact = (id: string) =>
    t.connection.db!.collection('contacts').findOne({ _id: new Types.ObjectId(id) });
  const archivedOf = (id: string) =>
    archive
      .find({ contactId: new Types.ObjectId(id) })
      .sort({ at: 1 })
      .lean<ArchivedConsentEvent[]>()
      .exec();

  describe('consent history', () => {
    async function subscriber(email: string): Promise<string> {
      const res = await admin.http.post(`/admin/${appId}/newsletter/subscribers`, {
        email,
        firstName: 'Zoë',
      });
      expect(res.status).toBe(201);
      return res.body.data._id as string;
    }
    /** One consent change with the longest reason in the widest characters, naming the person. */
    async function flip(id: string, status: boolean, email: string) {
      const reason = `${email} ${wide(REASON_MAX - email.length - 1)}`;
      const res = await admin.http.patch(`/admin/contacts/${id}/consent`, {
        category: 'blog',
        status,
        reason,
      });
      expect(res.status).toBe(200);
    }

    it('a contact cycled through many consent changes keeps a bounded document and its whole history', async () => {
      const email = 'cycler@example.com';
      const id = await subscriber(email);
      const changes = CONSENT_HISTORY_WINDOW * 2 + 30;
      let fullWindowBytes = 0;
      for (let i = 1; i <= changes; i++) {
        await flip(id, i % 2 === 0, email);
        if (i === CONSENT_HISTORY_WINDOW + 5)
          fullWindowBytes = BSON.calculateObjectSize((await rawContact(id))!);
      }
      const stored = (await rawContact(id))!;
      const total = changes; // an admin's subscriber add records no consent event
      expect(stored.consentHistory).toHaveLength(CONSENT_HISTORY_WINDOW);
      // Once the window is full the document stops growing, whatever the number of changes.
      expect(BSON.calculateObjectSize(stored)).toBeLessThanOrEqual(fullWindowBytes + 100);
      expect(BSON.calculateObjectSize(stored)).toBeLessThan(1024 * 1024);
      expect(await archive.countDocuments({ contactId: new Types.ObjectId(id) })).toBe(
        total - CONSENT_HISTORY_WINDOW,
      );

      // The contact view shows the newest events; the export every event, oldest first, each once.
      const view = await admin.http.get(`/admin/contacts/${id}`);
      expect(view.body.data.consentHistory).toHaveLength(CONSENT_HISTORY_WINDOW);
      expect(view.body.data.consentHistory.at(-1)).toMatchObject({ status: changes % 2 === 0 });
      const exported = await admin.http.get(`/admin/contacts/${id}/export`);
      expect(exported.status).toBe(200);
      const history = exported.body.data.contact.consentHistory as { status: boolean; at: string }[];
      expect(history).toHaveLength(total);
      expect(history.map((event) => event.status)).toEqual(
        Array.from({ length: changes }, (_, i) => (i + 1) % 2 === 0),
      );
      const times = history.map((event) => Date.parse(event.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));

      // The GDPR delete still works and leaves nothing of the person in any event, archived or not.
      const erased = await admin.http.delete(`/admin/contacts/${id}`);
      expect(erased.status).toBeLessThan(300);
      const archived = await archivedOf(id);
      expect(archived.length).toBeGreaterThanOrEqual(total);
      const after = (await rawContact(id))!;
      for (const event of [...archived, ...(after.consentHistory as ConsentEvent[])]) {
        expect(JSON.stringify(event)).not.toContain(email);
        expect(JSON.stringify(event)).not.toContain('Zoë');
        expect(event).toMatchObject({ ip: null, referralUrl: null });
      }
      expect(after.deletedAt).toBeInstanceOf(Date);
    });

    it('moves a long history stored before the archive out of the document at its next change', async () => {
      const id = await subscriber('legacy@example.com');
      const start = Date.now() - 1_000_000;
      const legacy = Array.from({ length: 300 }, (_, i) => ({
        category: 'blog',
        status: i % 2 === 0,
        reason: null,
        source: 'joinlist',
        appId,
        actor: 'self',
        ip: '198.51.100.7',
        referralUrl: null,
        at: new Date(start + i * 1000),
      }));
      await contacts.updateOne({ _id: id }, { $set: { consentHistory: legacy } }).exec();

      await flip(id, true, 'legacy@example.com');
      expect((await rawContact(id))!.consentHistory).toHaveLength(CONSENT_HISTORY_WINDOW);
      expect(await archivedOf(id)).toHaveLength(301 - CONSENT_HISTORY_WINDOW);
      const exported = async () =>
        (await admin.http.get(`/admin/contacts/${id}/export`)).body.data.contact.consentHistory as unknown[];
      const first = await exported();
      expect(first).toHaveLength(301);
      // Moving it again (the next change) writes the same archive entries: ids derive from the events.
      await flip(id, false, 'legacy@example.com');
      expect(await exported()).toHaveLength(302);
    });
  });

  describe('tickets', () => {
    /** The longest message in the widest characters, with the longest author fields. */
    const worstMessage = (): TicketMessage => ({
      _id: new Types.ObjectId(),
      content: wide(MESSAGE_MAX_LENGTH),
      isCustomer: true,
      authorEmail: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`,
      authorName: wide(100),
      createdAt: new Date(),
    });

    async function worstTicket(): Promise<string> {
      const files: FilePart[] = Array.from({ length: 5 }, (_, i) => ({
        filename: `${i}${wide(127)}.txt`,
        contentType: 'text/plain',
        content: 'x',
      }));
      const { payload, headers } = multipart(
        {
          email: `${'e'.repeat(64)}@example.com`,
          subject: wide(200),
          message: wide(MESSAGE_MAX_LENGTH),
          shopId: wide(100),
        },
        files,
      );
      const res = await user.http.request('POST', `/${appId}/tickets`, { payload, headers });
      expect(res.status).toBe(201);
      return res.body.data._id as string;
    }

    it('a ticket at its maximum stays under 16 MiB; one more message is refused with a 413', async () => {
      const id = await worstTicket();
      // Most of the thread seeded directly (hundreds of 40 KB requests add nothing), counted as the API
      // counts.
      const seeded = Array.from(
        { length: Math.floor(THREAD_MAX_BYTES / threadEntryBytes(worstMessage())) - 3 },
        worstMessage,
      );
      await ticketModel(t)
        .updateOne(
          { _id: id },
          {
            $set: {
              messages: seeded,
              messageCount: seeded.length,
              threadBytes: seeded.reduce((sum, message) => sum + threadEntryBytes(message), 0),
            },
          },
        )
        .exec();
      expect(seeded.length).toBeLessThan(MAX_MESSAGES_PER_TICKET);

      let accepted = 0;
      let refused: { status: number; body: Record<string, unknown> } | undefined;
      while (!refused) {
        const { _id: _ignored, createdAt: _at, ...body } = worstMessage();
        const res = await user.http.post(`/${appId}/tickets/${id}/messages`, body);
        if (res.status === 201) accepted += 1;
        else refused = res;
        expect(accepted).toBeLessThan(10);
      }
      expect(accepted).toBeGreaterThan(0);
      expect(refused.status).toBe(413);
      expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/^content: .*MiB/) });

      const stored = (await t.connection.db!.collection('tickets').findOne({ _id: new Types.ObjectId(id) }))!;
      expect(stored.messageCount).toBe(seeded.length + accepted);
      expect(BSON.calculateObjectSize(stored)).toBeLessThan(MONGODB_MAX_DOCUMENT_BYTES);
      expect(stored.threadBytes).toBeLessThanOrEqual(THREAD_MAX_BYTES);
      // The counter is what the thread takes in the document.
      const threadInDocument =
        BSON.calculateObjectSize({ messages: stored.messages }) - 4 - 1 - 'messages'.length - 1;
      expect(Math.abs(stored.threadBytes - threadInDocument)).toBeLessThan(stored.messageCount * 2 + 8);
      // A short message still fits: the bound is on bytes, not a closed thread.
      expect((await user.http.post(`/${appId}/tickets/${id}/messages`, { content: 'ok' })).status).toBe(201);
    });

    it('a sixth attachment is refused with a 400 naming files', async () => {
      const files: FilePart[] = Array.from({ length: 6 }, (_, i) => ({
        filename: `f${i}.txt`,
        contentType: 'text/plain',
        content: 'x',
      }));
      const { payload, headers } = multipart({ email: 'a@example.com', subject: 'S', message: 'M' }, files);
      const res = await user.http.request('POST', `/${appId}/tickets`, { payload, headers });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/^files: /) });
    });
  });
});
