import { getConnectionToken, getModelToken } from '@nestjs/mongoose';
import type { Connection, Model } from 'mongoose';
import { AuditLogService } from '../src/audit/audit-log.service';
import { AuditTrail } from '../src/audit/audit-trail.service';
import { AuditIntent } from '../src/audit/schemas/audit-intent.schema';
import { AuditRecord } from '../src/audit/schemas/audit-record.schema';
import { Role } from '../src/common/auth/roles';
import { ContactsService } from '../src/contacts/contacts.service';
import { User } from '../src/users/schemas/user.schema';
import { compileApp, createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { HttpClient } from './helpers/http';
import { createSession, Session } from './helpers/session';

describe('Audit log', () => {
  let t: TestApp;
  let admin: Session;
  let records: Model<AuditRecord>;
  let intents: Model<AuditIntent>;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await createSession(t, Role.Admin);
    records = t.app.get<Model<AuditRecord>>(getModelToken(AuditRecord.name));
    intents = t.app.get<Model<AuditIntent>>(getModelToken(AuditIntent.name));
  });
  afterAll(() => t.close());

  it('records a change with its actor, target, app, IP and field names (no values), for admins only', async () => {
    const created = await admin.http.post(
      '/users',
      { email: 'ada-audit@example.com', password: 'secret-password-1', firstName: 'Ada', lastName: 'L' },
      { headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'req-audit-1' } },
    );
    expect(created.status).toBe(201);
    const listed = await admin.http.get('/admin/audit-log', {
      query: { action: 'user.create', actor: admin.user.id },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data[0]).toMatchObject({
      action: 'user.create',
      actorId: admin.user.id,
      actorEmail: admin.user.email,
      role: 'admin',
      targetType: 'user',
      targetId: created.body.data._id,
      ip: '203.0.113.7',
      requestId: 'req-audit-1',
      fields: ['email', 'firstName', 'lastName', 'password'],
      outcome: 'done',
      status: 201,
    });
    expect(JSON.stringify(listed.body)).not.toContain('secret-password-1');
    for (const role of [Role.User, Role.Viewer]) {
      const other = await createSession(t, role);
      expect((await other.http.get('/admin/audit-log')).status).toBe(403);
    }
  });

  it('filters by actor e-mail, target, app and time, and pages by cursor', async () => {
    const app = await seedApp(t);
    for (let i = 0; i < 3; i += 1) {
      await admin.http.patch(`/admin/apps/${app.id}`, { description: `v${i}` });
    }
    const byApp = await admin.http.get('/admin/audit-log', { query: { appId: app.id, limit: 2 } });
    expect(byApp.body.data).toHaveLength(2);
    expect(byApp.body.data.every((r: AuditRecord) => r.appId === app.id)).toBe(true);
    const rest = await admin.http.get('/admin/audit-log', {
      query: { appId: app.id, limit: 2, after: byApp.body.pagination.next },
    });
    expect(rest.body.data).toHaveLength(1);
    const byEmail = await admin.http.get('/admin/audit-log', {
      query: { actor: admin.user.email, action: 'app.update' },
    });
    expect(byEmail.body.data.length).toBeGreaterThanOrEqual(3);
    expect(byEmail.body.data.every((r: AuditRecord) => r.action === 'app.update')).toBe(true);
    const two = await admin.http.get('/admin/audit-log', { query: { actor: admin.user.id, appId: app.id } });
    expect(two.status).toBe(400);
    const future = await admin.http.get('/admin/audit-log', { query: { from: '2999-01-01T00:00:00Z' } });
    expect(future.body.data).toEqual([]);
    const bad = await admin.http.get('/admin/audit-log', { query: { from: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/from/);
  });

  it('keeps an erased contact’s address out of every record (ids only)', async () => {
    const app = await seedApp(t);
    const email = 'erase-me-audit@example.com';
    const { contact } = await t.app.get(ContactsService).signUp({ appId: app.id, email, source: 'joinlist' });
    await admin.http.get(`/admin/contacts/${String(contact._id)}/export`);
    expect((await admin.http.delete(`/admin/contacts/${String(contact._id)}`)).status).toBe(200);
    const about = await records.find({ targetId: String(contact._id) }).lean();
    expect(about.map((r) => r.action).sort()).toEqual(['contact.erase', 'contact.export']);
    expect(JSON.stringify(await records.find().lean())).not.toContain(email);
  });

  it('does not carry out an action whose audit intent cannot be written', async () => {
    const trail = t.app.get(AuditTrail);
    const begin = jest.spyOn(trail, 'begin').mockRejectedValueOnce(new Error('audit store away'));
    const refused = await admin.http.post('/users', {
      email: 'never-created@example.com',
      password: 'secret-password-1',
      firstName: 'N',
      lastName: 'C',
    });
    begin.mockRestore();
    expect(refused.status).toBe(500);
    const users = t.app.get<Model<User>>(getModelToken(User.name));
    expect(await users.exists({ email: 'never-created@example.com' })).toBeNull();
  });

  it('keeps one unbroken chain under concurrent writers, and audit:verify names an edited record', async () => {
    // Two trails on one database, as two instances have: each guesses the tip from its own last write.
    const other = new AuditTrail(records, intents);
    const trails = [t.app.get(AuditTrail), other];
    const entry = { action: 'test.concurrent', fields: [], outcome: 'done' as const, status: 200 };
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        trails[i % 2].append(new Date(), { ...entry, targetId: String(i) }),
      ),
    );
    const audit = t.app.get(AuditLogService);
    const intact = await audit.verify();
    expect(intact.firstBreak).toBeNull();
    expect(intact.checked).toBe(await records.countDocuments());

    const victim = await records.findOne({ action: 'test.concurrent', targetId: '7' }).lean();
    await records.updateOne({ _id: victim!._id }, { $set: { actorId: 'someone-else' } });
    const broken = await audit.verify();
    expect(broken.firstBreak).toMatchObject({ seq: victim!.seq, id: String(victim!._id) });
  });

  it('deletes old records as a prefix of the chain, which still verifies from the oldest kept', async () => {
    const audit = t.app.get(AuditLogService);
    await records.deleteMany({});
    const trail = new AuditTrail(records, intents);
    const entry = { action: 'test.retention', fields: [], outcome: 'done' as const, status: 200 };
    for (let i = 0; i < 6; i += 1) await trail.append(new Date(), entry);
    const ordered = await records.find().sort({ seq: 1 }).lean();
    // The first three are a year and a day old.
    const old = new Date(Date.now() - 366 * 86_400_000);
    await records.collection.updateMany({ seq: { $lte: ordered[2].seq } }, { $set: { at: old } });
    expect(await audit.sweep(365)).toBe(3);
    // Re-dating them broke their hashes; what is left starts at the fourth and holds.
    const after = await audit.verify();
    expect(after).toMatchObject({ checked: 3, firstBreak: null });
  });
});

describe('Audit interceptor with several applications in one process', () => {
  it('records through the application that answers, not the last one configured', async () => {
    // Both are configured before either starts, as Nest reads a route's interceptors at init.
    const first = await compileApp();
    const second = await compileApp();
    try {
      await first.init();
      await second.init();
      const t: TestApp = {
        app: first,
        http: new HttpClient(first),
        connection: first.get<Connection>(getConnectionToken()),
        close: () => first.close(),
      };
      const firstTrail = jest.spyOn(first.get(AuditTrail), 'begin');
      const secondTrail = jest.spyOn(second.get(AuditTrail), 'begin');
      const admin = await createSession(t, Role.Admin);
      const created = await admin.http.post('/users', {
        email: 'grace-two-apps@example.com',
        password: 'secret-password-2',
        firstName: 'Grace',
        lastName: 'H',
      });
      expect(created.status).toBe(201);
      expect(firstTrail).toHaveBeenCalledTimes(1);
      expect(secondTrail).not.toHaveBeenCalled();
      const records = first.get<Model<AuditRecord>>(getModelToken(AuditRecord.name));
      const written = await records.find({ action: 'user.create', targetId: created.body.data._id }).lean();
      expect(written).toHaveLength(1);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
