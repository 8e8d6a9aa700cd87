import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { App } from '../src/apps/schemas/app.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { FilePart, multipart } from './helpers/multipart';
import { createSession, Session } from './helpers/session';
import { ticketModel } from './helpers/tickets';

describe('Ticket attachments (multipart uploads)', () => {
  let t: TestApp;
  let user: Session;
  let viewer: Session;
  let appA: App;
  let appB: App;
  const uploads = () => join(process.env.DATA_DIR!, 'uploads');

  beforeAll(async () => {
    t = await createTestApp();
    user = await createSession(t, Role.User);
    viewer = await createSession(t, Role.Viewer);
    appA = await seedApp(t);
    appB = await seedApp(t);
  });
  afterAll(() => t.close());

  const fields = {
    email: 'Buyer@Example.com',
    subject: 'Broken item',
    message: 'See the photos',
    priority: 'high',
  };
  const png: FilePart = {
    filename: 'photo.png',
    contentType: 'image/png',
    content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2]),
  };
  const note: FilePart = { filename: 'notes.txt', contentType: 'text/plain', content: 'hello\nworld' };

  const upload = (appId: string, form: Record<string, string>, files: FilePart[], session = user) => {
    const { payload, headers } = multipart(form, files);
    return session.http.request('POST', `/${appId}/tickets`, { payload, headers });
  };
  const storedPath = (appId: string, ticketId: string, key: string) =>
    join(uploads(), 'tickets', appId, ticketId, key);

  it('creates a ticket from form fields and files, listing each stored file', async () => {
    const res = await upload(appA.id, fields, [png, note]);
    expect(res.status).toBe(201);
    const ticket = res.body.data;
    expect(ticket).toMatchObject({
      appId: appA.id,
      email: 'buyer@example.com',
      subject: 'Broken item',
      status: 'pending',
      priority: 'high',
      topic: 'general',
    });
    expect(ticket.attachments).toHaveLength(2);
    expect(ticket.attachments[0]).toMatchObject({ filename: 'photo.png', mimetype: 'image/png', size: 6 });
    expect(ticket.attachments[1]).toMatchObject({ filename: 'notes.txt', mimetype: 'text/plain', size: 11 });
    for (const attachment of ticket.attachments) {
      expect(attachment.key).toMatch(/^[a-f\d]{32}$/);
      expect(attachment.url).toMatch(
        new RegExp(`^http://localhost:\\d+/${appA.id}/tickets/${ticket._id}/attachments/${attachment.key}$`),
      );
      expect(existsSync(storedPath(appA.id, ticket._id, attachment.key))).toBe(true);
    }
    expect(await readFile(storedPath(appA.id, ticket._id, ticket.attachments[1].key), 'utf8')).toBe(
      'hello\nworld',
    );
  });

  it('lets staff download a file as an attachment with a safe name and nosniff', async () => {
    const created = await upload(appA.id, fields, [{ ...note, filename: '../../Résumé final.txt' }]);
    const ticket = created.body.data;
    const [attachment] = ticket.attachments;
    expect(attachment.filename).toBe('Résumé final.txt');
    const res = await viewer.http.get(`/${appA.id}/tickets/${ticket._id}/attachments/${attachment.key}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello\nworld');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="R_sum_ final.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20final.txt`,
    );
    expect(res.headers['content-length']).toBe('11');
  });

  it('answers 404 for another app, an unknown key, a traversal attempt or a hosted attachment', async () => {
    const ticket = (await upload(appA.id, fields, [note])).body.data;
    const key = ticket.attachments[0].key;
    for (const url of [
      `/${appB.id}/tickets/${ticket._id}/attachments/${key}`,
      `/${appA.id}/tickets/${ticket._id}/attachments/${'0'.repeat(32)}`,
      `/${appA.id}/tickets/${ticket._id}/attachments/..%2F..%2F..%2Fetc%2Fpasswd`,
      `/${appA.id}/tickets/not-an-id/attachments/${key}`,
    ]) {
      const res = await viewer.http.get(url);
      expect({ url, status: res.status }).toEqual({ url, status: 404 });
    }
    expect((await t.http.get(`/${appA.id}/tickets/${ticket._id}/attachments/${key}`)).status).toBe(401);
  });

  it('deletes the stored files with the ticket, singly and in bulk', async () => {
    const one = (await upload(appA.id, fields, [png])).body.data;
    const two = (await upload(appA.id, fields, [png, note])).body.data;
    const paths = (ticket: { _id: string; attachments: { key: string }[] }) =>
      ticket.attachments.map((a) => storedPath(appA.id, ticket._id, a.key));

    expect((await user.http.delete(`/tickets/${one._id}`)).status).toBe(200);
    expect(paths(one).map(existsSync)).toEqual([false]);

    const bulk = await user.http.delete(`/${appA.id}/tickets`, { ids: [two._id] });
    expect(bulk.body.deletedCount).toBe(1);
    expect(paths(two).map(existsSync)).toEqual([false, false]);
  });

  it('refuses a sixth file with 400 and stores nothing', async () => {
    const before = await ticketModel(t).countDocuments();
    const files = Array.from({ length: 6 }, (_, i) => ({ ...note, filename: `n${i}.txt` }));
    const res = await upload(appA.id, fields, files);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/at most 5 files/);
    expect(await ticketModel(t).countDocuments()).toBe(before);
    expect((await upload(appA.id, fields, files.slice(0, 5))).status).toBe(201);
  });

  it.each([
    ['text/html', 'page.html'],
    ['image/svg+xml', 'logo.svg'],
    ['application/x-msdownload', 'run.exe'],
  ])('refuses %s with 400 naming the type', async (contentType, filename) => {
    const res = await upload(appA.id, fields, [{ filename, contentType, content: 'x' }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`files: ${filename} has type ${contentType}`);
  });

  it('refuses a file over 5 MiB with 413 and accepts one of exactly 5 MiB', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, 0x61);
    const res = await upload(appA.id, fields, [{ ...note, content: big }]);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, error: 'files: notes.txt is larger than 5 MiB' });
    const exact = await upload(appA.id, fields, [{ ...note, content: big.subarray(1) }]);
    expect(exact.status).toBe(201);
    expect(exact.body.data.attachments[0].size).toBe(5 * 1024 * 1024);
  });

  it('refuses an empty file', async () => {
    const res = await upload(appA.id, fields, [{ ...note, content: '' }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/notes.txt is empty/);
  });

  it.each([
    [{ email: undefined }, /email/],
    [{ subject: '' }, /subject/],
    [{ priority: 'critical' }, /priority/],
    [{ status: 'closed' }, /status should not exist/],
    [{ attachments: 'https://x.example.com/a' }, /attachments must be an array/],
  ])('validates the form fields like the JSON body: %p', async (overrides, message) => {
    const form = Object.fromEntries(
      Object.entries({ ...fields, ...overrides }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    const res = await upload(appA.id, form, [png]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('answers 400 to a repeated field, 404 to an unknown app and 403 to a viewer', async () => {
    const { payload, headers } = multipart([...Object.entries(fields), ['email', 'other@example.com']]);
    const res = await user.http.request('POST', `/${appA.id}/tickets`, { payload, headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/email must be given once/);

    expect((await upload('no-such-app', fields, [png])).status).toBe(404);
    expect((await upload(appA.id, fields, [png], viewer)).status).toBe(403);
  });
});
