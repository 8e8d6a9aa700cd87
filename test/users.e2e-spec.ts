import { Role } from '../src/common/auth/roles';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { createSession, Session, TEST_PASSWORD } from './helpers/session';

describe('Users', () => {
  let t: TestApp;
  let admin: Session;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    admin = await createSession(t, Role.Admin);
  });

  const newUser = (overrides: Record<string, unknown> = {}) => ({
    email: 'Jane.Doe@Example.com',
    password: 'secret1',
    firstName: 'Jane',
    lastName: 'Doe',
    ...overrides,
  });

  describe('POST /users', () => {
    it('creates a user with defaults, a lower-cased e-mail and no password in the response', async () => {
      const res = await admin.http.post('/users', newUser());
      expect(res.status).toBe(201);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toMatchObject({
        email: 'jane.doe@example.com',
        firstName: 'Jane',
        lastName: 'Doe',
        role: 'user',
        isActive: true,
        loginCount: 0,
        profile: { timezone: 'UTC', language: 'en' },
        settings: { notifications: { email: true, push: false }, theme: 'auto' },
      });
      expect(res.text).not.toMatch(/password|\$2[aby]\$|tokenVersion/);
    });

    it('stores the password as a bcrypt hash at the configured cost (BCRYPT_COST) that logs in', async () => {
      await admin.http.post('/users', newUser());
      const raw = await t.connection.db!.collection('users').findOne({ email: 'jane.doe@example.com' });
      expect(raw!.password).toMatch(
        new RegExp(`^\\$2[aby]\\$${process.env.BCRYPT_COST!.padStart(2, '0')}\\$`),
      );
      const login = await t.http.post('/auth/login', { email: 'jane.doe@example.com', password: 'secret1' });
      expect(login.status).toBe(200);
    });

    it('answers 409 for a taken e-mail (whatever its case)', async () => {
      await admin.http.post('/users', newUser());
      const res = await admin.http.post('/users', newUser({ email: 'JANE.DOE@example.com' }));
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(/email/);
    });

    it.each([
      [{ email: 'nope' }, /email/],
      [{ password: '12345' }, /password/],
      [{ firstName: undefined }, /firstName/],
      [{ role: 'superuser' }, /role/],
      [{ profile: { bio: 'x'.repeat(501) } }, /profile\.bio/],
      [{ profile: { language: 'de' } }, /profile\.language/],
      [{ settings: { theme: 'neon' } }, /settings\.theme/],
      [{ settings: { notifications: { email: 'yes' } } }, /settings\.notifications\.email/],
      [{ loginCount: 99 }, /loginCount should not exist/],
      [{ email: { $gt: '' } }, /email/],
    ])('answers 400 naming the field for %p', async (overrides, message) => {
      const res = await admin.http.post('/users', newUser(overrides));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });
  });

  describe('GET /users', () => {
    beforeEach(async () => {
      await admin.http.post('/users', newUser({ email: 'v@example.com', role: 'viewer' }));
      await admin.http.post('/users', newUser({ email: 'u@example.com', role: 'user' }));
      const res = await admin.http.post('/users', newUser({ email: 'gone@example.com', role: 'user' }));
      await admin.http.delete(`/users/${res.body.data._id}`);
    });

    it('lists every user without pagination and without password hashes', async () => {
      const res = await admin.http.get('/users');
      expect(res.status).toBe(200);
      expect(res.body.pagination).toBeUndefined();
      expect(res.body.data).toHaveLength(4);
      expect(res.text).not.toMatch(/password|\$2[aby]\$/);
    });

    it('filters by role and by isActive', async () => {
      const users = await admin.http.get('/users', { query: { role: 'user' } });
      expect(users.body.data.map((u: { email: string }) => u.email).sort()).toEqual([
        'gone@example.com',
        'u@example.com',
      ]);
      const inactive = await admin.http.get('/users', { query: { isActive: 'false' } });
      expect(inactive.body.data.map((u: { email: string }) => u.email)).toEqual(['gone@example.com']);
      const activeUsers = await admin.http.get('/users', { query: { role: 'user', isActive: 'true' } });
      expect(activeUsers.body.data.map((u: { email: string }) => u.email)).toEqual(['u@example.com']);
    });

    it.each<Record<string, string>>([{ role: 'root' }, { isActive: 'yes' }, { 'role[$ne]': 'x' }])(
      'answers 400 for filter %p',
      async (query) => {
        const res = await admin.http.get('/users', { query });
        expect(res.status).toBe(400);
      },
    );
  });

  describe('GET, PATCH, DELETE /users/:id', () => {
    let id: string;
    beforeEach(async () => {
      id = (await admin.http.post('/users', newUser())).body.data._id;
    });

    it('gets a user, and 404 for unknown or malformed ids', async () => {
      expect((await admin.http.get(`/users/${id}`)).body.data.email).toBe('jane.doe@example.com');
      expect((await admin.http.get('/users/64b7f0c2a1b2c3d4e5f60718')).status).toBe(404);
      expect((await admin.http.get('/users/nope')).status).toBe(404);
    });

    it('updates allowed fields and merges nested profile and settings', async () => {
      await admin.http.patch(`/users/${id}`, { profile: { bio: 'Hello', timezone: 'Europe/Paris' } });
      const res = await admin.http.patch(`/users/${id}`, {
        firstName: 'Janet',
        role: 'viewer',
        profile: { phone: '+33 1' },
        settings: { theme: 'dark', notifications: { push: true } },
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toMatchObject({
        firstName: 'Janet',
        role: 'viewer',
        profile: { bio: 'Hello', timezone: 'Europe/Paris', phone: '+33 1', language: 'en' },
        settings: { theme: 'dark', notifications: { email: true, push: true } },
      });
    });

    it.each([
      { password: 'secret22' },
      { email: 'x@example.com' },
      { _id: 'x' },
      { loginCount: 5 },
      { tokenVersion: 0 },
    ])('answers 400 for %p and changes nothing', async (body) => {
      const before = (await admin.http.get(`/users/${id}`)).body.data;
      const res = await admin.http.patch(`/users/${id}`, { firstName: 'Changed', ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`${Object.keys(body)[0]} should not exist`));
      expect((await admin.http.get(`/users/${id}`)).body.data).toEqual(before);
    });

    it('answers 400 for a bio over 500 and 404 for an unknown user', async () => {
      expect((await admin.http.patch(`/users/${id}`, { profile: { bio: 'x'.repeat(501) } })).status).toBe(
        400,
      );
      expect((await admin.http.patch('/users/64b7f0c2a1b2c3d4e5f60718', { firstName: 'X' })).status).toBe(
        404,
      );
    });

    it('DELETE deactivates (the record stays, login stops working)', async () => {
      const res = await admin.http.delete(`/users/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });
      expect((await admin.http.get(`/users/${id}`)).body.data.isActive).toBe(false);
      expect(
        (await t.http.post('/auth/login', { email: 'jane.doe@example.com', password: 'secret1' })).status,
      ).toBe(401);
      expect((await admin.http.delete('/users/64b7f0c2a1b2c3d4e5f60718')).status).toBe(404);
    });
  });

  describe('the last active admin', () => {
    const LAST_ADMIN = /at least one active admin must remain/i;

    it.each<
      [string, (self: string) => Promise<{ status: number; body: { success: boolean; error: string } }>]
    >([
      ['PATCH role', (self) => admin.http.patch(`/users/${self}`, { role: 'user' })],
      ['PATCH isActive:false', (self) => admin.http.patch(`/users/${self}`, { isActive: false })],
      ['DELETE', (self) => admin.http.delete(`/users/${self}`)],
    ])('answers 409 to %s on the only active admin and changes nothing', async (_name, send) => {
      const res = await send(admin.user.id);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(LAST_ADMIN) });
      expect((await admin.http.get(`/users/${admin.user.id}`)).body.data).toMatchObject({
        role: 'admin',
        isActive: true,
      });
    });

    it('leaves the other fields of a refused PATCH unchanged', async () => {
      const res = await admin.http.patch(`/users/${admin.user.id}`, { firstName: 'Renamed', role: 'viewer' });
      expect(res.status).toBe(409);
      expect((await admin.http.get(`/users/${admin.user.id}`)).body.data.firstName).toBe('Test');
    });

    it('lets an admin step down while another stays, then refuses the last one', async () => {
      const other = await createSession(t, Role.Admin);
      expect((await admin.http.patch(`/users/${admin.user.id}`, { role: 'user' })).status).toBe(200);
      expect((await other.http.delete(`/users/${other.user.id}`)).status).toBe(409);
      expect((await other.http.patch(`/users/${other.user.id}`, { isActive: false })).status).toBe(409);
      // An inactive admin does not count: deactivating the active one is still refused.
      const dormant = await createSession(t, Role.Admin, { isActive: false });
      expect((await other.http.patch(`/users/${other.user.id}`, { role: 'viewer' })).status).toBe(409);
      expect((await other.http.patch(`/users/${dormant.user.id}`, { role: 'user' })).status).toBe(200);
    });

    it('keeps an active admin when admins remove each other concurrently', async () => {
      const users = t.connection.db!.collection('users');
      for (let round = 0; round < 5; round += 1) {
        await resetDatabase(t.connection);
        const admins = await Promise.all([1, 2, 3].map(() => createSession(t, Role.Admin)));
        // Each admin removes itself and the next one, some by PATCH and some by DELETE, all at once.
        const results = await Promise.all(
          admins.flatMap((a, i) => {
            const next = admins[(i + 1) % admins.length].user.id;
            return [
              a.http.patch(`/users/${a.user.id}`, i % 2 ? { isActive: false } : { role: 'user' }),
              a.http.delete(`/users/${next}`),
            ];
          }),
        );
        expect(results.map((r) => r.status).every((s) => s === 200 || s === 409 || s === 401)).toBe(true);
        expect(await users.countDocuments({ role: 'admin', isActive: true })).toBeGreaterThanOrEqual(1);
      }
    });
  });

  describe('PATCH /users/:id/password', () => {
    it('lets an admin change any password (min 6), then the new one logs in', async () => {
      const target = await createSession(t, Role.User);
      expect(
        (await admin.http.patch(`/users/${target.user.id}/password`, { password: '12345' })).status,
      ).toBe(400);
      const res = await admin.http.patch(`/users/${target.user.id}/password`, { password: 'brand-new-1' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });
      expect(
        (await t.http.post('/auth/login', { email: target.user.email, password: TEST_PASSWORD })).status,
      ).toBe(401);
      expect(
        (await t.http.post('/auth/login', { email: target.user.email, password: 'brand-new-1' })).status,
      ).toBe(200);
    });

    it.each([Role.User, Role.Viewer])(
      'lets a %s change their own password but not somebody else’s',
      async (role) => {
        const self = await createSession(t, role);
        const other = await createSession(t, Role.User);
        expect(
          (await self.http.patch(`/users/${other.user.id}/password`, { password: 'hijacked1' })).status,
        ).toBe(403);
        expect(
          (await self.http.patch(`/users/${self.user.id}/password`, { password: 'my-new-one' })).status,
        ).toBe(200);
      },
    );
  });

  describe('bootstrap admin', () => {
    it('creates the ADMIN_EMAIL admin once and never overwrites an existing password', async () => {
      const { UsersService } = await import('../src/users/users.service');
      const users = t.app.get(UsersService);
      expect(await users.ensureAdmin('Boot@Example.com', 'first-password')).toBe(true);
      expect(await users.ensureAdmin('boot@example.com', 'second-password')).toBe(false);
      const login = await t.http.post('/auth/login', {
        email: 'boot@example.com',
        password: 'first-password',
      });
      expect(login.status).toBe(200);
      expect(login.body.user).toMatchObject({ role: 'admin', email: 'boot@example.com' });
    });
  });
});
