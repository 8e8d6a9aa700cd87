import type { App } from '../src/apps/schemas/app.schema';
import { type TestApp } from './helpers/app';
import { useMailApp } from './helpers/mail-app';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import { createSession, type Session } from './helpers/session';
import { type ReceivedMail, type TestSmtpServer } from './helpers/smtp';

const ORIGIN = 'https://www.lumen.test';

/** The text of a body, soft line breaks and `=XX` escapes of quoted-printable undone. */
const decoded = (mail: ReceivedMail) =>
  mail.body
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** Every link of a message to the service's routes: host and path. */
const serviceLinks = (mail: ReceivedMail) =>
  [
    ...`${decoded(mail)} ${mail.headers['list-unsubscribe'] ?? ''}`.matchAll(
      /https?:\/\/([a-z0-9.-]+)(?::\d+)?(\/(?:c|o|unsubscribe|joinlist\/confirm)\/[A-Za-z0-9._~-]+)/g,
    ),
  ].map(([, host, path]) => ({ host, path }));

/**
 * Link domains (docs/operations/sending-domains.md "Link domains"): two apps, each with a verified
 * tracking CNAME on a DNS server of the test's own, get their links on their own host, and each host
 * answers its app's tokens only.
 */
describe('Link domains', () => {
  let dns: TestDnsServer;
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;

  // Before the mail app's hooks: the app starts with this DNS server's address.
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns?.close());
  const mailApp = useMailApp(() => ({ env: { DNS_SERVERS: dns.address } }));
  beforeAll(() => {
    ({ t, smtp } = mailApp);
  });
  beforeEach(async () => {
    admin = await createSession(t);
    dns.records.length = 0;
  });

  /** Adds, publishes (every record, the tracking CNAME included) and verifies a sender domain of `app`. */
  const setUpDomain = async (app: App, domain: string) => {
    const created = await admin.http.post('/admin/sender-domains', { domain, appId: app.id });
    expect(created.status).toBe(201);
    const records = created.body.data.records as { type: 'TXT' | 'CNAME'; name: string; value: string }[];
    dns.records.push(...records.map(({ type, name, value }) => ({ type, name, value })));
    const verified = await admin.http.post(`/admin/sender-domains/${created.body.data.id}/verify`);
    expect(verified.body.data.state).toBe('verified');
    expect(verified.body.data.records).toContainEqual(
      expect.objectContaining({ purpose: 'tracking', state: 'verified' }),
    );
    const patched = await admin.http.patch(`/admin/apps/${app.id}`, {
      sender: { name: app.name, email: `news@${domain}` },
    });
    expect(patched.status).toBe(200);
  };

  const sendCampaign = async (app: App) => {
    const base = `/admin/${app.id}/newsletter/campaigns`;
    const draft = await admin.http.post(base, {
      name: 'News',
      subject: `News of ${app.name}`,
      htmlContent: '<p>Hi</p><a href="https://example.org/read">Read</a>',
    });
    expect(draft.status).toBe(201);
    const sent = await admin.http.post(`${base}/${draft.body.data._id}/send`);
    expect(sent.status).toBeLessThan(300);
  };

  it("puts each app's links on its own link host, which answers that app's tokens only", async () => {
    const lumen = await seedApp(t, {
      name: 'Lumen',
      allowedOrigins: [ORIGIN],
      features: { doubleOptIn: true },
    });
    const atlas = await seedApp(t, { name: 'Atlas', allowedOrigins: [ORIGIN] });
    await setUpDomain(lumen, 'lumen.test');
    await setUpDomain(atlas, 'atlas.test');
    await t.connection
      .collection('contacts')
      .insertMany([
        subscriberDocument(lumen.id, 'ada@example.net', 'Ada'),
        subscriberDocument(atlas.id, 'bob@example.net', 'Bob'),
      ]);
    const join = (app: App, email: string, client: number) =>
      t.http.post(
        '/joinlist',
        { email },
        { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': `10.38.1.${client}` } },
      );
    expect((await join(lumen, 'cy@example.net', 1)).status).toBeLessThan(300); // a confirmation
    expect((await join(atlas, 'dee@example.net', 2)).status).toBeLessThan(300); // a welcome
    await sendCampaign(lumen);
    await sendCampaign(atlas);
    await drainEmailQueue(t);

    const mailOf = (app: App, to: string) => {
      const mail = smtp.received.find((m) => m.headers.from.includes(app.name) && m.to.includes(to));
      expect(mail).toBeDefined();
      return mail!;
    };
    const lumenCampaign = serviceLinks(mailOf(lumen, 'ada@example.net'));
    const atlasCampaign = serviceLinks(mailOf(atlas, 'bob@example.net'));
    const confirmation = serviceLinks(mailOf(lumen, 'cy@example.net'));
    const welcome = serviceLinks(mailOf(atlas, 'dee@example.net'));
    // Click, pixel and unsubscribe (body and header) of each campaign, the confirmation and the welcome.
    for (const kind of ['/c/', '/o/', '/unsubscribe/'])
      expect(lumenCampaign.some((link) => link.path.startsWith(kind))).toBe(true);
    expect(confirmation.some((link) => link.path.startsWith('/joinlist/confirm/'))).toBe(true);
    expect(welcome.some((link) => link.path.startsWith('/unsubscribe/'))).toBe(true);
    for (const link of [...lumenCampaign, ...confirmation]) expect(link.host).toBe('links.lumen.test');
    for (const link of [...atlasCampaign, ...welcome]) expect(link.host).toBe('links.atlas.test');

    const on = (host: string) => t.http.with({ host });
    const lumenLinks = [...lumenCampaign, ...confirmation];
    for (const { path } of lumenLinks) {
      // Its own host answers it (a redirect, the pixel or a page), as does the service's own host.
      expect((await on('links.lumen.test').get(path)).status).toBeLessThan(400);
      expect((await on('localhost').get(path)).status).toBeLessThan(400);
      // Another app's link host refuses it with the one 404 a forged token gets: nothing tells them apart.
      const refused = await on('links.atlas.test').get(path);
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({ success: false, error: 'Link not found' });
      const forged = await on('links.atlas.test').get(path.replace(/[A-Za-z0-9_-](?=[^/]*$)/, 'x'));
      expect({ status: forged.status, body: forged.body }).toEqual({ status: 404, body: refused.body });
    }
    // The one-click POST on the wrong host changes nothing; on the right host it unsubscribes.
    const unsubscribe = lumenCampaign.find((link) => link.path.startsWith('/unsubscribe/'))!.path;
    expect((await on('links.atlas.test').post(unsubscribe)).status).toBe(404);
    const person = () => t.connection.collection('contacts').findOne({ email: 'ada@example.net' });
    expect((await person())?.subscriptions[0].status).toBe('active');
    expect((await on('links.lumen.test').post(unsubscribe)).status).toBe(200);
    expect((await person())?.subscriptions[0].status).toBe('unsubscribed');
  });

  it('keeps links on PUBLIC_BASE_URL until the tracking record is verified', async () => {
    const lumen = await seedApp(t, { name: 'Lumen' });
    const created = await admin.http.post('/admin/sender-domains', { domain: 'lumen.test', appId: lumen.id });
    const records = created.body.data.records as {
      purpose: string;
      type: 'TXT';
      name: string;
      value: string;
    }[];
    dns.records.push(...records.filter((record) => record.purpose !== 'tracking'));
    await admin.http.post(`/admin/sender-domains/${created.body.data.id}/verify`);
    await t.connection.collection('contacts').insertOne(subscriberDocument(lumen.id, 'ada@example.net'));
    await sendCampaign(lumen);
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    const links = serviceLinks(smtp.received[0]);
    expect(links.length).toBeGreaterThanOrEqual(3);
    for (const link of links) expect(link.host).toBe('localhost');
  });
});
