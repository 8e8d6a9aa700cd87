import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { Role } from '../src/common/auth/roles';
import { Contact } from '../src/contacts/schemas/contact.schema';
import Handlebars from 'handlebars';
import { OUTSIDE_TESTS_PER_WINDOW } from '../src/newsletter/campaigns/campaign-test-recipients';
import { Campaign } from '../src/newsletter/campaigns/schemas/campaign.schema';
import { TrackingEvents } from '../src/email/tracking/tracking-events';
import { User } from '../src/users/schemas/user.schema';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const HTML = '<h1>Hello {{firstName}}</h1><p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';

/**
 * Handlebars compiles that ran, in any environment (they all share the JavaScriptCompiler class): counted
 * at the engine, so the count does not depend on the code under test counting its own compiles.
 */
const internals = Handlebars as unknown as {
  JavaScriptCompiler: { prototype: { compile: (...args: unknown[]) => unknown } };
};
const compileSpy = jest.spyOn(internals.JavaScriptCompiler.prototype, 'compile');
const compiles = () => compileSpy.mock.calls.length;

describe('Campaign test copies (issue 24: relaying any HTML to any address)', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let user: Session;
  let appId: string;

  const mailApp = useMailApp();
  beforeAll(() => {
    ({ t, smtp } = mailApp);
  });
  beforeEach(async () => {
    user = await createSession(t, Role.User);
    appId = (await seedApp(t)).id;
  });

  const base = () => `/admin/${appId}/newsletter/campaigns`;
  const draft = async (htmlContent = HTML) => {
    const res = await user.http.post(base(), { name: 'News', subject: 'News', htmlContent });
    expect(res.status).toBe(201);
    return res.body.data._id as string;
  };
  const test = (id: string, email: string, as: Session = user) =>
    as.http.post(`${base()}/${id}/test`, { email });

  it(`allows ${OUTSIDE_TESTS_PER_WINDOW} copies per hour per user to outside addresses, then answers 429`, async () => {
    const id = await draft();
    for (let i = 0; i < OUTSIDE_TESTS_PER_WINDOW; i += 1)
      expect((await test(id, `outsider${i}@example.net`)).status).toBe(200);
    const refused = await test(id, 'one-more@example.net');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: expect.stringMatching(/per hour/) });
    // Like every 429 of the service, it says when to come back.
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The budget is the user's: a colleague still has theirs.
    expect((await test(id, 'one-more@example.net', await createSession(t, Role.User))).status).toBe(200);
  });

  it('sends to the addresses of active users without counting them; a deactivated user is an outsider', async () => {
    const id = await draft();
    const colleague = await createSession(t, Role.Viewer);
    for (let i = 0; i < OUTSIDE_TESTS_PER_WINDOW + 2; i += 1) {
      expect((await test(id, user.user.email)).status).toBe(200);
      expect((await test(id, colleague.user.email.toUpperCase())).status).toBe(200);
    }
    await t.app
      .get<Model<User>>(getModelToken(User.name))
      .updateOne({ _id: colleague.user.id }, { isActive: false })
      .exec();
    for (let i = 0; i < OUTSIDE_TESTS_PER_WINDOW; i += 1)
      expect((await test(id, colleague.user.email)).status).toBe(200);
    expect((await test(id, colleague.user.email)).status).toBe(429);
  });

  it('tests drafts only: a campaign that left the draft state answers 409', async () => {
    const id = await draft();
    const campaigns = t.app.get<Model<Campaign>>(getModelToken(Campaign.name));
    for (const status of ['sending', 'sent', 'failed'] as const) {
      await campaigns.updateOne({ _id: id }, { status }).exec();
      const res = await test(id, user.user.email);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ success: false });
    }
  });

  it('carries the List-Unsubscribe headers and the recipient’s working unsubscribe link', async () => {
    const id = await draft();
    expect((await test(id, 'Reviewer@Example.net')).status).toBe(200);
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail.headers.subject).toBe('[Test] News');
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    const url = /^<(https?:\/\/\S+\/unsubscribe\/\S+)>$/.exec(mail.headers['list-unsubscribe'])?.[1];
    expect(url).toBeDefined();
    expect(mail.raw.replace(/=\r\n/g, '').replace(/=3D/g, '=')).toContain(url);
    const oneClick = await t.http.post(new URL(url!).pathname, undefined, {
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClick.status).toBe(200);
    const person = await t.app
      .get<Model<Contact>>(getModelToken(Contact.name))
      .findOne({ email: 'reviewer@example.net' })
      .lean<Contact>()
      .exec();
    expect(person).not.toBeNull();
  });

  it('fills every variable (first subscriber’s, or given) and carries working, uncounted tracking links', async () => {
    const people = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    await people.collection.insertOne({
      ...subscriberDocument(appId, 'ada@example.org', 'Ada'),
      lastName: 'Lovelace',
    });
    const id = await draft(
      '<p>Hi {{firstName}} {{lastName}} ({{email}})</p><a href="https://example.org/read">Read</a>' +
        '<a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    );
    expect((await test(id, 'qa@example.net')).status).toBe(200);
    const given = await user.http.post(`${base()}/${id}/test`, {
      email: 'qa@example.net',
      variables: { firstName: 'Grace' },
    });
    expect(given.status).toBe(200);
    const bad = await user.http.post(`${base()}/${id}/test`, {
      email: 'qa@example.net',
      variables: { lastName: 5 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/lastName/);
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(2);
    const bodies = smtp.received.map((mail) =>
      mail.body
        .replace(/=\r\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    );
    // Both copies are queued at once: they may reach the sink in either order.
    const adas = bodies.filter((body) => body.includes('Hi Ada Lovelace (qa@example.net)'));
    expect(adas).toHaveLength(1);
    expect(bodies.filter((body) => body.includes('Hi Grace Lovelace (qa@example.net)'))).toHaveLength(1);
    const [ada] = adas;
    for (const mail of smtp.received) expect(mail.headers['list-unsubscribe']).toMatch(/\/unsubscribe\//);
    // The real send's click redirect and open pixel, not the raw link.
    expect(ada).not.toContain('href="https://example.org/read"');
    const click = /https?:\/\/[^/"]+(\/c\/[A-Za-z0-9._~-]+)/.exec(ada)?.[1];
    const pixel = /https?:\/\/[^/"]+(\/o\/[A-Za-z0-9._~-]+\.gif)/.exec(ada)?.[1];
    expect(click).toBeDefined();
    expect(pixel).toBeDefined();
    const followed = await t.http.get(click!);
    expect(followed.status).toBe(302);
    expect(followed.headers.location).toBe('https://example.org/read');
    expect((await t.http.get(pixel!)).headers['content-type']).toBe('image/gif');
    // A tester's click and open are not the campaign's: nothing is recorded.
    await t.app.get(TrackingEvents).flush();
    expect(await t.connection.collection('email_events').countDocuments({ campaignId: id })).toBe(0);
  });

  it('does not compile the same content again for a second test copy', async () => {
    const id = await draft(`<p>Only here: ${Math.random()} {{firstName}}</p>`);
    expect((await test(id, user.user.email)).status).toBe(200);
    const before = compiles();
    expect((await test(id, user.user.email)).status).toBe(200);
    expect(compiles()).toBe(before);
  });

  it('refuses a stored draft over the template limits with a 400 naming the field, counting nothing', async () => {
    const id = await draft();
    await t.app
      .get<Model<Campaign>>(getModelToken(Campaign.name))
      .updateOne({ _id: id }, { htmlContent: '{{a}}'.repeat(40_000) })
      .exec();
    const res = await test(id, 'outsider@example.net');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^htmlContent: at most/);
    const fine = await draft();
    for (let i = 0; i < OUTSIDE_TESTS_PER_WINDOW; i += 1)
      expect((await test(fine, `outsider${i}@example.net`)).status).toBe(200);
  });

  it('sends a copy of HTML nested far deeper than a text converter recurses (its text part is cut)', async () => {
    const id = await draft();
    // Stored directly: the campaign routes' body limit is below the template size limit.
    await t.app
      .get<Model<Campaign>>(getModelToken(Campaign.name))
      .updateOne({ _id: id }, { htmlContent: '<p>Deep</p>' + '<div>'.repeat(19_000) + 'bottom' })
      .exec();
    expect((await test(id, user.user.email)).status).toBe(200);
  });
});
