import type { App } from '../src/apps/schemas/app.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { multipart } from './helpers/multipart';
import { createSession, type Session } from './helpers/session';
import { ticketModel } from './helpers/tickets';

/**
 * A ticket's attachments come only from files uploaded with it (multipart/form-data): their key, name,
 * type and size are the server's record of the stored file. A JSON body cannot name attachments of its
 * own (any URL, `text/html`, a path as the file name): 400, and nothing is stored.
 */
describe('Ticket attachments come from the upload only', () => {
  let t: TestApp;
  let user: Session;
  let app: App;

  beforeAll(async () => {
    t = await createTestApp();
    user = await createSession(t, Role.User);
    app = await seedApp(t);
  });
  afterAll(() => t.close());
  beforeEach(() => ticketModel(t).deleteMany({}));

  const ticket = {
    email: 'buyer@example.com',
    subject: 'Broken item',
    message: 'See the file',
  };

  it.each([
    [
      'an HTML page on another host',
      { url: 'https://evil.example.net/x.html', filename: 'invoice.html', mimetype: 'text/html', size: 10 },
    ],
    [
      'a path as the file name',
      { url: 'https://cdn.example.com/a.png', filename: '../../etc/passwd', mimetype: 'image/png', size: 1 },
    ],
    [
      'a link to one of our own download URLs',
      {
        url: `http://localhost:3000/${'x'}/tickets/0/attachments/${'a'.repeat(32)}`,
        key: 'a'.repeat(32),
        filename: 'a.png',
        mimetype: 'image/png',
        size: 1,
      },
    ],
  ])(
    'refuses a JSON body naming %s (400 naming attachments), storing nothing',
    async (_label, attachment) => {
      const res = await user.http.post(`/${app.id}/tickets`, { ...ticket, attachments: [attachment] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/^attachments/) });
      expect(await ticketModel(t).countDocuments()).toBe(0);
    },
  );

  it('takes an empty list (the spec names the field) and stores no attachment', async () => {
    const res = await user.http.post(`/${app.id}/tickets`, { ...ticket, attachments: [] });
    expect(res.status).toBe(201);
    expect(res.body.data.attachments).toEqual([]);
  });

  it('refuses an attachments field in a multipart form too', async () => {
    const attachments = JSON.stringify([{ url: 'https://evil.example.net/x.html' }]);
    const { payload, headers } = multipart({ ...ticket, attachments });
    const res = await user.http.request('POST', `/${app.id}/tickets`, { payload, headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^attachments/);
    expect(await ticketModel(t).countDocuments()).toBe(0);
  });

  it('lists uploaded files with the metadata of the stored file, not the client’s claims', async () => {
    const { payload, headers } = multipart(ticket, [
      { filename: '../../etc/passwd.txt', contentType: 'text/plain', content: 'hello' },
    ]);
    const res = await user.http.request('POST', `/${app.id}/tickets`, { payload, headers });
    expect(res.status).toBe(201);
    const [attachment] = res.body.data.attachments;
    expect(attachment).toMatchObject({ filename: 'passwd.txt', mimetype: 'text/plain', size: 5 });
    expect(attachment.key).toMatch(/^[a-f\d]{32}$/);
    expect(attachment.url).toMatch(
      new RegExp(`/${app.id}/tickets/${res.body.data._id}/attachments/${attachment.key}$`),
    );
  });
});
