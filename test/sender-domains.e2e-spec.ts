import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import type { App } from '../src/apps/schemas/app.schema';
import { type TestApp } from './helpers/app';
import { useMailApp } from './helpers/mail-app';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSession, type Session } from './helpers/session';
import { type ReceivedMail, type TestSmtpServer } from './helpers/smtp';

const ORIGIN = 'https://www.lumen.test';

interface RecordView {
  purpose: string;
  type: 'TXT' | 'CNAME';
  name: string;
  value: string;
  state: string;
}

/**
 * Sender domains end to end (docs/operations/sending-domains.md): the records the API answers are served
 * by a DNS server of the test's own; every kind of mail of two apps is checked by an outside DKIM verifier
 * (mailauth) against those records.
 */
describe('Sender domains, app senders and DKIM', () => {
  let dns: TestDnsServer;
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;
  let resolver: Resolver;

  // Before the mail app's hooks: the app starts with this DNS server's address.
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns?.close());
  const mailApp = useMailApp(() => ({ env: { DNS_SERVERS: dns.address } }));
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    resolver = new Resolver();
    resolver.setServers([dns.address]);
  });
  beforeEach(async () => {
    admin = await createSession(t);
    dns.records.length = 0;
  });

  /** What mailauth says of a message's first signature, looking keys up on the test's DNS server. */
  const dkimOf = async (mail: ReceivedMail) => {
    const { results } = await dkimVerify(Buffer.from(mail.raw), {
      resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT'),
    });
    return results[0];
  };

  const addDomain = async (domain: string, appId: string) => {
    const res = await admin.http.post('/admin/sender-domains', { domain, appId });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; records: RecordView[]; selector: string };
  };
  const verify = async (id: string) => {
    const res = await admin.http.post(`/admin/sender-domains/${id}/verify`);
    expect(res.status).toBe(200);
    return res.body.data as { state: string; records: RecordView[] };
  };
  /** Adds, publishes and verifies a domain of `app`, and makes it the app's sender. */
  const setUpSender = async (app: App, domain: string, name: string) => {
    const created = await addDomain(domain, app.id);
    dns.records.push(...created.records.map(({ type, name: host, value }) => ({ type, name: host, value })));
    expect((await verify(created.id)).state).toBe('verified');
    const patched = await admin.http.patch(`/admin/apps/${app.id}`, {
      sender: { name, email: `news@${domain}`, replyTo: `help@${domain}` },
    });
    expect(patched.status).toBe(200);
    return created;
  };

  it('answers the records to publish, each pending, missing before they are published', async () => {
    const app = await seedApp(t);
    const created = await addDomain('Lumen.TEST', app.id);
    expect(created.records.map((record) => record.purpose)).toEqual([
      'dkim',
      'spf',
      'dmarc',
      'return-path',
      'tracking',
    ]);
    expect(created.records[0]).toMatchObject({
      type: 'TXT',
      name: `${created.selector}._domainkey.lumen.test`,
      value: expect.stringMatching(/^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/=]+$/),
      state: 'pending',
    });
    const checked = await verify(created.id);
    expect(checked.state).toBe('pending');
    expect(checked.records.map((record) => record.state)).toEqual(Array(5).fill('missing'));
    // The private key is stored sealed, never in clear.
    const stored = await t.connection.collection('sender_domains').findOne({});
    expect(JSON.stringify(stored)).not.toMatch(/PRIVATE KEY/);
    expect(stored?.dkim.sealedPrivateKey).toMatch(/^v1\./);

    dns.records.push({ type: 'TXT', name: created.records[0].name, value: 'v=DKIM1; k=rsa; p=AAAA' });
    expect((await verify(created.id)).records[0].state).toBe('mismatch');

    const listed = await admin.http.get('/admin/sender-domains');
    expect(listed.body.data).toEqual([expect.objectContaining({ domain: 'lumen.test', state: 'pending' })]);
    expect((await admin.http.delete(`/admin/sender-domains/${created.id}`)).status).toBe(200);
    expect((await admin.http.get('/admin/sender-domains')).body.data).toEqual([]);
  });

  it('refuses a bad domain or app with 400 naming the field, a taken domain with 409', async () => {
    const app = await seedApp(t);
    const bad = await admin.http.post('/admin/sender-domains', { domain: 'not a domain', appId: app.id });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/domain/);
    const unknown = await admin.http.post('/admin/sender-domains', { domain: 'a.test', appId: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/appId/);
    await addDomain('a.test', app.id);
    expect((await admin.http.post('/admin/sender-domains', { domain: 'a.test', appId: app.id })).status).toBe(
      409,
    );
    expect((await admin.http.post('/admin/sender-domains/nope/verify')).status).toBe(404);
  });

  it('refuses an app or template sender off the app’s verified domains with 400 naming the field', async () => {
    const lumen = await seedApp(t);
    const other = await seedApp(t);
    const refused = await admin.http.patch(`/admin/apps/${lumen.id}`, { sender: { email: 'x@yahoo.com' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/sender\.email/);
    // Added but not verified: still refused.
    await addDomain('lumen.test', lumen.id);
    expect(
      (await admin.http.patch(`/admin/apps/${lumen.id}`, { sender: { email: 'news@lumen.test' } })).status,
    ).toBe(400);
    // The global default domain (MAIL_FROM's) is always allowed.
    const fallback = await admin.http.patch(`/admin/apps/${lumen.id}`, {
      sender: { name: 'Lumen', email: 'lumen@example.com' },
    });
    expect(fallback.status).toBe(200);
    expect((await admin.http.get(`/admin/apps/${lumen.id}`)).body.data.sender).toEqual({
      name: 'Lumen',
      email: 'lumen@example.com',
    });
    // Another app's verified domain is not this app's.
    await setUpSender(other, 'other.test', 'Other');
    const template = await admin.http.post('/admin/templates', {
      appId: lumen.id,
      name: 'note',
      subject: 'Hi',
      htmlTemplate: '<p>Hi</p>',
      textTemplate: 'Hi',
      sender: { email: 'news@other.test' },
    });
    expect(template.status).toBe(400);
    expect(template.body.error).toMatch(/sender\.email/);
  });

  it('signs campaign, test copy, confirmation, welcome and magic-link mail of two apps with their own keys', async () => {
    const lumen = await seedApp(t, {
      name: 'Lumen Club',
      allowedOrigins: [ORIGIN],
      features: { doubleOptIn: true },
    });
    const atlas = await seedApp(t, {
      name: 'Atlas',
      allowedOrigins: [ORIGIN],
      features: { magicLinkUrl: 'https://atlas.test/sign-in' },
    });
    await setUpSender(lumen, 'lumen.test', 'Lumen Club');
    await setUpSender(atlas, 'atlas.test', 'Atlas');

    const join = (app: App, email: string, client: number) =>
      t.http.post(
        '/joinlist',
        { email },
        {
          headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': `10.38.0.${client}` },
        },
      );
    expect((await join(lumen, 'ada@example.net', 1)).status).toBeLessThan(300); // confirmation
    expect((await join(atlas, 'bob@example.net', 2)).status).toBeLessThan(300); // welcome
    const magic = await t.http.post(
      '/auth/magic-link',
      { email: 'bob@example.net', appId: atlas.id },
      {
        headers: { 'x-forwarded-for': '10.38.0.3' },
      },
    );
    expect(magic.status).toBeLessThan(300);
    await t.app.get(MagicLinkService).idle();

    for (const app of [lumen, atlas]) {
      const base = `/admin/${app.id}/newsletter/campaigns`;
      const draft = await admin.http.post(base, {
        name: 'News',
        subject: `News of ${app.name}`,
        htmlContent: '<p>Hi {{firstName}}</p><a href="https://example.org/x">x</a>',
      });
      expect(draft.status).toBe(201);
      const id = draft.body.data._id as string;
      expect((await admin.http.post(`${base}/${id}/test`, { email: 'qa@example.net' })).status).toBe(200);
    }
    await drainEmailQueue(t);

    const domainOf = { [lumen.id]: 'lumen.test', [atlas.id]: 'atlas.test' };
    expect(smtp.received.length).toBeGreaterThanOrEqual(5);
    for (const mail of smtp.received) {
      const from = mail.headers.from;
      const domain = /lumen\.test/.test(from) ? domainOf[lumen.id] : domainOf[atlas.id];
      expect(from).toMatch(new RegExp(`<news@${domain.replace('.', '\\.')}>$`));
      expect(mail.headers['reply-to']).toBe(`help@${domain}`);
      expect(mail.headers['message-id']).toMatch(new RegExp(`@${domain.replace('.', '\\.')}>$`));
      expect(mail.from).toBe(`bounces@bounces.${domain}`);
      const result = await dkimOf(mail);
      expect(result).toMatchObject({ status: { result: 'pass' }, signingDomain: domain });
      const signed = (mail.headers['dkim-signature'].match(/(?:^|;)\s*h=([^;]+)/)?.[1] ?? '').replace(
        /\s/g,
        '',
      );
      for (const header of ['From', 'Subject', 'Date', 'Message-ID', 'To'])
        expect(signed.toLowerCase().split(':')).toContain(header.toLowerCase());
      if (mail.headers['list-unsubscribe']) expect(signed.toLowerCase()).toMatch(/list-unsubscribe-post/);
    }
    const subjects = smtp.received.map((mail) => `${mail.headers.from} | ${mail.headers.subject}`);
    expect(subjects.filter((line) => /lumen\.test/.test(line)).length).toBeGreaterThanOrEqual(2);
    expect(subjects.filter((line) => /atlas\.test/.test(line)).length).toBeGreaterThanOrEqual(3);
  });

  it('a domain that loses its DKIM record turns failed and its mail goes out from MAIL_FROM, unsigned', async () => {
    const lumen = await seedApp(t, { name: 'Lumen Club' });
    const created = await setUpSender(lumen, 'lumen.test', 'Lumen Club');
    dns.records.splice(0, 1); // the DKIM record
    const checked = await verify(created.id);
    expect(checked.state).toBe('failed');
    expect(checked.records[0].state).toBe('missing');
    const base = `/admin/${lumen.id}/newsletter/campaigns`;
    const draft = await admin.http.post(base, { name: 'N', subject: 'N', htmlContent: '<p>Hi</p>' });
    await admin.http.post(`${base}/${draft.body.data._id}/test`, { email: 'qa@example.net' });
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].headers.from).toMatch(/no-reply@example\.com/);
    expect(smtp.received[0].headers['dkim-signature']).toBeUndefined();
  });

  it('rotates a DKIM key with overlap: old key signs until the new record verifies, then marked removable', async () => {
    const lumen = await seedApp(t, { name: 'Lumen Club' });
    const created = await setUpSender(lumen, 'lumen.test', 'Lumen Club');
    const base = `/admin/${lumen.id}/newsletter/campaigns`;
    const draft = await admin.http.post(base, { name: 'N', subject: 'N', htmlContent: '<p>Hi</p>' });
    const signedWith = async () => {
      smtp.received.length = 0;
      expect(
        (await admin.http.post(`${base}/${draft.body.data._id}/test`, { email: 'qa@example.net' })).status,
      ).toBe(200);
      await drainEmailQueue(t);
      expect(smtp.received).toHaveLength(1);
      const result = await dkimOf(smtp.received[0]);
      expect(result.status.result).toBe('pass');
      return /(?:^|;)\s*s=([^;\s]+)/.exec(smtp.received[0].headers['dkim-signature'])?.[1];
    };
    const dkimRecords = (records: (RecordView & { key?: string; removable?: boolean })[]) =>
      records.filter((record) => record.purpose === 'dkim');

    const rotated = await admin.http.post(`/admin/sender-domains/${created.id}/rotate-key`);
    expect(rotated.status).toBe(200);
    const [signing, next] = dkimRecords(rotated.body.data.records);
    expect(signing).toMatchObject({ key: 'signing', name: `${created.selector}._domainkey.lumen.test` });
    expect(next).toMatchObject({ key: 'next', state: 'pending', value: expect.stringMatching(/^v=DKIM1;/) });
    expect(next.name).not.toBe(signing.name);
    // Until the new record is published and verified, the old key signs.
    expect(await signedWith()).toBe(created.selector);
    const unpublished = await verify(created.id);
    expect(unpublished.state).toBe('verified');
    expect(dkimRecords(unpublished.records).map((record) => record.state)).toEqual(['verified', 'missing']);
    expect(await signedWith()).toBe(created.selector);

    dns.records.push({ type: 'TXT', name: next.name, value: next.value });
    const promoted = await verify(created.id);
    expect(dkimRecords(promoted.records)).toEqual([
      expect.objectContaining({ key: 'signing', name: next.name, state: 'verified' }),
      expect.objectContaining({ key: 'previous', name: signing.name, state: 'verified', removable: false }),
    ]);
    const newSelector = next.name.split('.')[0];
    expect(await signedWith()).toBe(newSelector);

    // The overlap (DKIM_KEY_OVERLAP_DAYS, 7 by default) over: the old record is listed as removable.
    const stored = await t.connection.collection('sender_domains').findOne({});
    const overlap = stored!.previousDkim.retiresAt.getTime() - stored!.checkedAt.getTime();
    expect(overlap).toBe(7 * 86_400_000);
    await t.connection
      .collection('sender_domains')
      .updateOne({}, { $set: { 'previousDkim.retiresAt': new Date(Date.now() - 1) } });
    const listed = (await admin.http.get('/admin/sender-domains')).body.data[0];
    expect(listed.selector).toBe(newSelector);
    expect(dkimRecords(listed.records).at(-1)).toMatchObject({ key: 'previous', removable: true });
    expect((await admin.http.post('/admin/sender-domains/nope/rotate-key')).status).toBe(404);
  });
});
