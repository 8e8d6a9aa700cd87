import { EventEmitter2 } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { emailAddressMessage } from '../src/common/validation/email-address';
import { ContactsService } from '../src/contacts/contacts.service';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { NewsletterSignupEvent, SignupEvents } from '../src/contacts/signup.events';
import { UnsubscribeLinks } from '../src/contacts/unsubscribe/unsubscribe-links';
import { IMPORT_MAX } from '../src/newsletter/dto/subscriber.dto';
import { UNSUBSCRIBED_TEXT } from '../src/newsletter/newsletter-public.controller';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import type { HttpClient } from './helpers/http';
import { createSessions, Session } from './helpers/session';

describe('Newsletter subscribers', () => {
  let t: TestApp;
  let contacts: Model<Contact>;
  let people: ContactsService;
  let links: UnsubscribeLinks;
  let user: Session;
  let viewer: Session;
  let appId: string;
  let otherAppId: string;
  let key: HttpClient;
  let otherKey: HttpClient;
  let signups: NewsletterSignupEvent[];

  beforeAll(async () => {
    t = await createTestApp();
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    people = t.app.get(ContactsService);
    links = t.app.get(UnsubscribeLinks);
    t.app.get(EventEmitter2).on(SignupEvents.NewsletterSignup, (event: NewsletterSignupEvent) => {
      signups.push(event);
    });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
    otherAppId = (await seedApp(t)).id;
    key = t.http.with({ 'x-api-key': (await seedApiKey(t, appId)).value });
    otherKey = t.http.with({ 'x-api-key': (await seedApiKey(t, otherAppId)).value });
    signups = [];
  });

  const subscribe = (body: Record<string, unknown>, http = key, app = appId) =>
    http.post(`/${app}/newsletter/subscribe`, body);
  const person = (email: string) => contacts.findOne({ email }).lean<Contact>().orFail().exec();
  const subscriptionOf = (contact: Contact, app = appId) =>
    contact.subscriptions.find((s) => s.appId === app);
  const base = () => `/admin/${appId}/newsletter/subscribers`;

  describe('POST /{appId}/newsletter/subscribe (API key)', () => {
    it('subscribes a new person with consent, source api, and tells the newsletter channel', async () => {
      const res = await subscribe({
        email: ' Ada@Example.com ',
        firstName: 'Ada',
        locale: 'fr',
        referralUrl: 'https://shop.test/blog',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ success: true, data: { email: 'ada@example.com', firstName: 'Ada' } });
      const ada = await person('ada@example.com');
      expect(ada.locale).toBe('fr');
      expect(ada.consent.blog).toBe(true);
      expect(subscriptionOf(ada)).toMatchObject({
        status: 'active',
        source: 'api',
        referralUrl: 'https://shop.test/blog',
      });
      expect(ada.consentHistory).toEqual([
        expect.objectContaining({ category: 'blog', status: true, source: 'api', appId, actor: 'self' }),
      ]);
      expect(signups).toEqual([expect.objectContaining({ appId, email: 'ada@example.com', source: 'api' })]);
    });

    it('does not re-activate after an unsubscribe by itself (a confirmation mail does)', async () => {
      await subscribe({ email: 'bob@example.com' });
      const bob = await person('bob@example.com');
      const token = links.token({ contactId: String(bob._id), appId });
      expect((await key.get(`/${appId}/newsletter/unsubscribe/${token}`)).status).toBe(200);
      expect(subscriptionOf(await person('bob@example.com'))?.status).toBe('unsubscribed');

      const again = await subscribe({ email: 'bob@example.com', firstName: 'Bob' });
      expect(again.status).toBe(201);
      expect(again.body.data).toEqual({ email: 'bob@example.com', firstName: 'Bob' });
      const back = await person('bob@example.com');
      expect(subscriptionOf(back)?.status).toBe('unsubscribed');
      expect(back.consent.blog).toBe(false);
      expect(back.consentHistory.map((e) => [e.status, e.source])).toEqual([
        [true, 'api'],
        [false, 'api'],
      ]);
      expect(signups).toHaveLength(1);
    });

    it('is harmless when repeated (no new event, no new signup)', async () => {
      await subscribe({ email: 'carl@example.com' });
      expect((await subscribe({ email: 'carl@example.com' })).status).toBe(201);
      expect((await person('carl@example.com')).consentHistory).toHaveLength(1);
      expect(signups).toHaveLength(1);
    });

    it('refuses a bad body, a key of another app and no key', async () => {
      expect((await subscribe({ email: 'not-an-address' })).status).toBe(400);
      expect((await subscribe({ email: 'a@example.com', locale: 'xx' })).status).toBe(400);
      expect((await subscribe({ email: 'a@example.com', extra: 1 })).status).toBe(400);
      expect((await subscribe({ email: 'a@example.com' }, otherKey)).status).toBe(403);
      expect((await subscribe({ email: 'a@example.com' }, t.http)).status).toBe(401);
      expect(await contacts.countDocuments()).toBe(0);
    });
  });

  describe('GET and POST /{appId}/newsletter/unsubscribe/{token} (API key)', () => {
    let token: string;
    let contactId: string;

    beforeEach(async () => {
      // A token as the joinlist hands it out (its unsubscribeUrl ends with it).
      const { contact } = await people.signUp({ appId, email: 'dana@example.com', source: 'joinlist' });
      await people.signUp({ appId: otherAppId, email: 'dana@example.com', source: 'joinlist' });
      contactId = String(contact._id);
      token = links.url({ contactId, appId }).split('/').pop()!;
    });

    it.each(['GET', 'POST'] as const)('%s unsubscribes at once with a plain-text answer', async (method) => {
      const res = await key.request(method, `/${appId}/newsletter/unsubscribe/${token}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe(UNSUBSCRIBED_TEXT);
      const dana = await person('dana@example.com');
      expect(subscriptionOf(dana)?.status).toBe('unsubscribed');
      expect(subscriptionOf(dana, otherAppId)?.status).toBe('active');
      // Still subscribed elsewhere: blog consent stays.
      expect(dana.consent.blog).toBe(true);
      expect(dana.consentHistory.at(-1)).toMatchObject({ source: 'api', appId, actor: 'self' });

      const again = await key.request(method, `/${appId}/newsletter/unsubscribe/${token}`);
      expect(again.status).toBe(200);
      expect((await person('dana@example.com')).consentHistory).toHaveLength(dana.consentHistory.length);
    });

    it("answers 404 with the error envelope to another app's token and an invalid one", async () => {
      const foreign = links.token({ contactId, appId: otherAppId });
      for (const bad of [foreign, `${token}x`, 'nonsense']) {
        const res = await key.post(`/${appId}/newsletter/unsubscribe/${bad}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: expect.any(String) });
      }
      const dana = await person('dana@example.com');
      expect(dana.subscriptions.every((s) => s.status === 'active')).toBe(true);
    });

    it("answers 403 to another app's API key", async () => {
      expect((await otherKey.get(`/${appId}/newsletter/unsubscribe/${token}`)).status).toBe(403);
      expect(subscriptionOf(await person('dana@example.com'))?.status).toBe('active');
    });
  });

  describe('admin', () => {
    /**
     * A known set: 3 active (api, joinlist ×2), 1 unsubscribed, 1 bounced, 1 of another app only, 1 erased.
     */
    async function seedKnownSet() {
      await people.signUp({ appId, email: 'a1@example.com', firstName: 'Alice', source: 'api' });
      await people.signUp({ appId, email: 'a2@example.com', source: 'joinlist' });
      const { contact: a3 } = await people.signUp({ appId, email: 'a3@example.com', source: 'joinlist' });
      await people.change(a3, () => ({ change: { set: { lastName: 'Zebra' } }, result: null }));
      const { contact: u } = await people.signUp({ appId, email: 'u1@example.com', source: 'joinlist' });
      await people.unsubscribe(String(u._id), appId, { source: 'unsubscribe', actor: 'self' });
      const { contact: b } = await people.signUp({ appId, email: 'b1@example.com', source: 'import' });
      await people.change(b, (current) => ({
        change: {
          set: { subscriptions: current.subscriptions.map((s) => ({ ...s, status: 'bounced' as const })) },
        },
        result: null,
      }));
      await people.signUp({ appId: otherAppId, email: 'o1@example.com', source: 'api' });
      const { contact: erased } = await people.signUp({ appId, email: 'e1@example.com', source: 'api' });
      await contacts.updateOne({ _id: erased._id }, { $set: { deletedAt: new Date() } });
    }

    it('GET stats counts the app’s subscriptions by status and source', async () => {
      await seedKnownSet();
      const res = await viewer.http.get(`${base()}/stats`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        total: 5,
        active: 3,
        unsubscribed: 1,
        bounced: 1,
        bySource: { api: 1, joinlist: 3, import: 1 },
      });
      const empty = await viewer.http.get(`/admin/${(await seedApp(t)).id}/newsletter/subscribers/stats`);
      expect(empty.body.data).toEqual({ total: 0, active: 0, unsubscribed: 0, bounced: 0, bySource: {} });
      const unknown = await viewer.http.get(`/admin/unknown-app/newsletter/subscribers/stats`);
      expect(unknown.body).toEqual({ success: false, error: 'App not found' });
    });

    it('GET lists the app’s subscribers with status and search filters', async () => {
      await seedKnownSet();
      const all = await viewer.http.get(base());
      expect(all.status).toBe(200);
      expect(all.body.pagination).toMatchObject({ total: 5, page: 1 });
      const emails = (res: { body: { data: { email: string }[] } }) =>
        res.body.data.map((s) => s.email).sort();
      expect(emails(all)).toEqual(['a1', 'a2', 'a3', 'b1', 'u1'].map((n) => `${n}@example.com`));
      expect(all.body.data[0].subscriptions).toHaveLength(1);

      expect(emails(await viewer.http.get(base(), { query: { status: 'active' } }))).toEqual([
        'a1@example.com',
        'a2@example.com',
        'a3@example.com',
      ]);
      expect(emails(await viewer.http.get(base(), { query: { status: 'unsubscribed' } }))).toEqual([
        'u1@example.com',
      ]);
      // o1 is active in the other app only: the status applies to this app's subscription.
      expect(emails(await viewer.http.get(base(), { query: { status: 'bounced' } }))).toEqual([
        'b1@example.com',
      ]);
      expect(emails(await viewer.http.get(base(), { query: { search: 'alice' } }))).toEqual([
        'a1@example.com',
      ]);
      expect(emails(await viewer.http.get(base(), { query: { search: 'zeb' } }))).toEqual(['a3@example.com']);
      expect(emails(await viewer.http.get(base(), { query: { search: '.*' } }))).toEqual([]);
      expect((await viewer.http.get(base(), { query: { status: 'gone' } })).status).toBe(400);
      expect((await viewer.http.get(base(), { query: { search: 'x'.repeat(101) } })).status).toBe(400);
      const paged = await viewer.http.get(base(), { query: { limit: 2, page: 3 } });
      expect(paged.body.data).toHaveLength(1);
    });

    it('POST creates a subscriber without consent; an existing one keeps their choices', async () => {
      const res = await user.http.post(base(), { email: 'New@Example.com', firstName: 'Nia', locale: 'de' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        email: 'new@example.com',
        firstName: 'Nia',
        locale: 'de',
        subscriptions: [expect.objectContaining({ appId, status: 'active', source: 'admin' })],
      });
      const nia = await person('new@example.com');
      expect(String(nia._id)).toBe(res.body.data._id);
      expect(nia.consent.blog).toBeNull();
      expect(nia.consentHistory).toEqual([]);

      // Someone known from another app: the subscription is added, their name stays.
      await people.signUp({ appId: otherAppId, email: 'old@example.com', firstName: 'Olga', source: 'api' });
      const old = await user.http.post(base(), { email: 'old@example.com', firstName: 'Other' });
      expect(old.status).toBe(201);
      expect(old.body.data.firstName).toBe('Olga');
      expect((await person('old@example.com')).subscriptions).toHaveLength(2);

      expect((await user.http.post(base(), { email: 'new@example.com' })).status).toBe(409);
      const { contact } = await people.signUp({ appId, email: 'left@example.com', source: 'api' });
      await people.unsubscribe(String(contact._id), appId, { source: 'unsubscribe', actor: 'self' });
      expect((await user.http.post(base(), { email: 'left@example.com' })).status).toBe(409);
      expect(subscriptionOf(await person('left@example.com'))?.status).toBe('unsubscribed');

      expect((await user.http.post(base(), { email: 'bad' })).status).toBe(400);
      expect(
        (await user.http.post('/admin/no-such-app/newsletter/subscribers', { email: 'x@example.com' }))
          .status,
      ).toBe(404);
      expect((await viewer.http.post(base(), { email: 'v@example.com' })).status).toBe(403);
    });

    it('DELETE removes the app’s subscription only; 404 without one', async () => {
      const { contact } = await people.signUp({ appId, email: 'del@example.com', source: 'api' });
      await people.signUp({ appId: otherAppId, email: 'del@example.com', source: 'api' });
      const id = String(contact._id);
      expect((await viewer.http.delete(`${base()}/${id}`)).status).toBe(403);
      const res = await user.http.delete(`${base()}/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });
      const after = await person('del@example.com');
      expect(after.subscriptions.map((s) => s.appId)).toEqual([otherAppId]);
      expect(after.consent.blog).toBe(true);
      expect(after.revision).toBe(contact.revision + 2);

      expect((await user.http.delete(`${base()}/${id}`)).status).toBe(404);
      expect((await user.http.delete(`${base()}/not-an-id`)).status).toBe(404);
      expect((await user.http.delete(`${base()}/64b7f0c2a1b2c3d4e5f60718`)).status).toBe(404);
    });

    describe('POST import', () => {
      const importing = (subscribers: unknown) => user.http.post(`${base()}/import`, { subscribers });

      it('imports new and existing people, skips invalid, repeated and already subscribed ones', async () => {
        // Known elsewhere (gets the subscription), already active here, and unsubscribed here.
        await people.signUp({
          appId: otherAppId,
          email: 'known@example.com',
          firstName: 'Kim',
          source: 'api',
        });
        await people.signUp({ appId, email: 'active@example.com', source: 'joinlist' });
        const { contact: left } = await people.signUp({ appId, email: 'left@example.com', source: 'api' });
        await people.unsubscribe(String(left._id), appId, { source: 'unsubscribe', actor: 'self' });
        const leftBefore = await person('left@example.com');

        const res = await importing([
          { email: 'one@example.com', firstName: ' One ', locale: 'es' },
          { email: 'not an address' },
          { email: 'ONE@example.com' },
          { email: 'known@example.com', firstName: 'Ignored' },
          { email: 'active@example.com' },
          { email: 'left@example.com' },
          'text',
          { email: 'two@example.com', locale: 'xx' },
          { email: 'three@example.com', lastName: 'Unknown field' },
          { email: 'four@example.com' },
        ]);
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual({
          imported: 3,
          skipped: 7,
          skippedDetails: [
            { index: 1, email: 'not an address', reason: 'invalid', error: emailAddressMessage('email') },
            { index: 2, email: 'one@example.com', reason: 'duplicate' },
            { index: 4, email: 'active@example.com', reason: 'already_subscribed' },
            { index: 5, email: 'left@example.com', reason: 'already_subscribed' },
            { index: 6, email: null, reason: 'invalid', error: expect.any(String) },
            {
              index: 7,
              email: 'two@example.com',
              reason: 'invalid',
              error: expect.stringContaining('locale'),
            },
            {
              index: 8,
              email: 'three@example.com',
              reason: 'invalid',
              error: expect.stringContaining('lastName'),
            },
          ],
          skippedDetailsTruncated: false,
        });

        const one = await person('one@example.com');
        expect(one).toMatchObject({ firstName: 'One', locale: 'es', consentHistory: [], revision: 1 });
        expect(one.consent).toEqual({ outreach: null, commercial: null, blog: null });
        expect(subscriptionOf(one)).toMatchObject({
          status: 'active',
          source: 'import',
          unsubscribedAt: null,
        });
        expect(one.createdAt).toBeInstanceOf(Date);

        const known = await person('known@example.com');
        expect(known.firstName).toBe('Kim');
        expect(subscriptionOf(known)).toMatchObject({ status: 'active', source: 'import' });
        expect(known.consentHistory).toHaveLength(1);

        // Importing never brings back someone who left.
        const leftAfter = await person('left@example.com');
        expect(leftAfter.subscriptions).toEqual(leftBefore.subscriptions);
        expect(leftAfter.consent).toEqual(leftBefore.consent);
        expect(leftAfter.revision).toBe(leftBefore.revision);

        // The same file again changes nothing.
        const again = await importing([{ email: 'one@example.com' }, { email: 'four@example.com' }]);
        expect(again.body.data).toMatchObject({ imported: 0, skipped: 2 });
        expect((await viewer.http.get(`${base()}/stats`)).body.data).toMatchObject({
          active: 4,
          unsubscribed: 1,
          bySource: { import: 3, joinlist: 1, api: 1 },
        });
      });

      it('takes 10,000 entries and refuses 10,001; refuses a missing list, a viewer and an unknown app', async () => {
        const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `p${i}@example.com` }));
        const full = await importing(entries(IMPORT_MAX));
        expect(full.status).toBe(200);
        expect(full.body.data).toMatchObject({ imported: IMPORT_MAX, skipped: 0 });
        expect(await contacts.countDocuments()).toBe(IMPORT_MAX);

        const over = await importing(entries(IMPORT_MAX + 1));
        expect(over.status).toBe(400);
        expect(over.body.error).toMatch(/subscribers/);
        expect((await importing('nope')).status).toBe(400);
        expect((await user.http.post(`${base()}/import`, {})).status).toBe(400);
        expect((await viewer.http.post(`${base()}/import`, { subscribers: [] })).status).toBe(403);
        const unknown = await user.http.post('/admin/no-such-app/newsletter/subscribers/import', {
          subscribers: [{ email: 'x@example.com' }],
        });
        expect(unknown.status).toBe(404);
      });

      it('lists at most 1,000 skipped entries and says so', async () => {
        const res = await importing(Array.from({ length: 1_500 }, () => ({ email: 'bad' })));
        expect(res.body.data).toMatchObject({ imported: 0, skipped: 1_500, skippedDetailsTruncated: true });
        expect(res.body.data.skippedDetails).toHaveLength(1_000);
      });
    });
  });
});
