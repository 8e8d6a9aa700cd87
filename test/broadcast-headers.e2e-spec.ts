import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import { useMailApp } from './helpers/mail-app';
import { createSession } from './helpers/session';
import type { ReceivedMail } from './helpers/smtp';

const ORIGIN = 'https://www.shop.test';

/** The raw header block's lines, as they travelled (folded lines stay separate). */
const headerLines = (mail: ReceivedMail) => mail.raw.slice(0, mail.raw.indexOf('\r\n\r\n')).split('\r\n');

/** The body with quoted-printable undone. */
const decoded = (mail: ReceivedMail) =>
  mail.body
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Headers of broadcast mail on a real SMTP server (docs/operations/email-delivery.md "Headers of broadcast
 * mail"): campaign messages and test copies carry Feedback-ID, List-Id, Precedence and Auto-Submitted,
 * transactional mail does not; every header line is at most 78 characters; a campaign without an
 * unsubscribe link in its body gets the footer.
 */
describe('Broadcast headers and the unsubscribe footer', () => {
  const mailApp = useMailApp();

  it('marks campaign mail and test copies as broadcast, folds every header line, adds the footer', async () => {
    const { t, smtp } = mailApp;
    const admin = await createSession(t);
    const app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
    await t.connection.collection('contacts').insertOne(subscriberDocument(app.id, 'ada@example.net', 'Ada'));
    const base = `/admin/${app.id}/newsletter/campaigns`;
    const draft = await admin.http.post(base, {
      name: 'News',
      subject: 'A subject long enough that its header line must be folded to stay within the limit',
      htmlContent: '<p>Hi {{firstName}}</p><a href="https://example.org/read">Read</a>',
    });
    const id = draft.body.data._id as string;
    expect((await admin.http.post(`${base}/${id}/test`, { email: 'qa@example.net' })).status).toBe(200);
    expect((await admin.http.post(`${base}/${id}/send`)).status).toBeLessThan(300);
    const welcome = await t.http.post(
      '/joinlist',
      { email: 'bob@example.net' },
      { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': '10.39.0.1' } },
    );
    expect(welcome.status).toBeLessThan(300);
    await drainEmailQueue(t);

    const to = (address: string) => smtp.received.find((mail) => mail.to.includes(address))!;
    for (const mail of [to('ada@example.net'), to('qa@example.net')]) {
      expect(mail.headers).toMatchObject({
        'feedback-id': `${id}:${app.id}:broadcast:example.com`,
        'list-id': `<${app.id}.example.com>`,
        precedence: 'bulk',
        'auto-submitted': 'auto-generated',
      });
      expect(mail.headers['list-unsubscribe']).toMatch(/^<http:\/\/\S+\/unsubscribe\/\S+>$/);
      for (const line of headerLines(mail)) expect(line.length).toBeLessThanOrEqual(78);
      // No unsubscribe link in the campaign's body: the footer carries the person's own.
      const unsubscribeUrl = mail.headers['list-unsubscribe'].slice(1, -1);
      expect(decoded(mail)).toContain(`<a href="${unsubscribeUrl}">Unsubscribe</a>`);
      // In the text part too (derived from the HTML here).
      expect(decoded(mail).split(unsubscribeUrl)).toHaveLength(3);
    }
    // Transactional mail is no broadcast.
    const transactional = to('bob@example.net');
    for (const header of ['feedback-id', 'list-id', 'precedence', 'auto-submitted'])
      expect(transactional.headers[header]).toBeUndefined();
  });

  it('adds no footer to a campaign with its own unsubscribe link', async () => {
    const { t, smtp } = mailApp;
    const admin = await createSession(t);
    const app = await seedApp(t);
    await t.connection.collection('contacts').insertOne(subscriberDocument(app.id, 'ada@example.net'));
    const base = `/admin/${app.id}/newsletter/campaigns`;
    const draft = await admin.http.post(base, {
      name: 'News',
      subject: 'News',
      htmlContent: '<p>Hi</p><a href="{{unsubscribeUrl}}">Leave this list</a>',
    });
    expect((await admin.http.post(`${base}/${draft.body.data._id}/send`)).status).toBeLessThan(300);
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    const body = decoded(smtp.received[0]);
    expect(body).toContain('Leave this list');
    expect(body).not.toContain('>Unsubscribe</a>');
  });
});
