import { crypto } from '@otplib/plugin-crypto-node';
import { generate } from '@otplib/totp';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { AuditRecord } from '../src/audit/schemas/audit-record.schema';
import { Role } from '../src/common/auth/roles';
import { User } from '../src/users/schemas/user.schema';
import { createTestApp, TestApp } from './helpers/app';
import { createSession, Session, TEST_PASSWORD } from './helpers/session';

/** The authenticator app's code for a base32 secret, `offset` steps from now. */
async function codeFor(base32Secret: string, offset = 0): Promise<string> {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of base32Secret) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const bytes = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  return generate({ secret: bytes, crypto, epoch: Math.floor(Date.now() / 1000) + offset * 30 });
}

describe('Two-factor sign-in (TOTP)', () => {
  let t: TestApp;
  let users: Model<User>;
  let records: Model<AuditRecord>;

  beforeAll(async () => {
    t = await createTestApp();
    users = t.app.get<Model<User>>(getModelToken(User.name));
    records = t.app.get<Model<AuditRecord>>(getModelToken(AuditRecord.name));
  });
  afterAll(() => t.close());

  const login = (email: string, code?: string, ip = '10.0.0.1') =>
    t.http.post(
      '/auth/login',
      { email, password: TEST_PASSWORD, ...(code ? { code } : {}) },
      { headers: { 'x-forwarded-for': ip } },
    );

  /** Enrols a session's user and answers the secret and the recovery codes. */
  async function enrol(session: Session) {
    const setup = await session.http.post('/auth/2fa/setup', {});
    expect(setup.status).toBe(200);
    const { secret, otpauthUri, qrCode } = setup.body.data;
    expect(otpauthUri).toContain(`secret=${secret}`);
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    const enabled = await session.http.post('/auth/2fa/enable', { code: await codeFor(secret) });
    expect(enabled.status).toBe(200);
    return { secret: secret as string, recoveryCodes: enabled.body.recoveryCodes as string[], enabled };
  }

  it('enrols, then asks for the code at sign-in; a code is accepted once, recovery codes once each', async () => {
    const staff = await createSession(t, Role.User);
    const { secret, recoveryCodes, enabled } = await enrol(staff);
    expect(recoveryCodes).toHaveLength(10);
    // Enabling ends the earlier tokens and answers a new one.
    expect((await staff.http.get('/auth/me')).status).toBe(401);
    const fresh = t.http.with({ authorization: `Bearer ${enabled.body.token}` });
    expect((await fresh.get('/auth/me')).status).toBe(200);

    const noCode = await login(staff.user.email);
    expect(noCode.status).toBe(401);
    expect(noCode.body).toEqual({ success: false, error: expect.any(String), twoFactorRequired: true });
    const wrong = await login(staff.user.email, '000000');
    expect(wrong.status).toBe(401);
    expect(wrong.body.twoFactorRequired).toBe(true);

    // The code confirmed at enable is spent: the next step's code signs in, once.
    const next = await codeFor(secret, 1);
    expect((await login(staff.user.email, next)).status).toBe(200);
    const replay = await login(staff.user.email, next);
    expect(replay.status).toBe(401);
    expect(replay.body.twoFactorRequired).toBe(true);

    expect((await login(staff.user.email, recoveryCodes[0].toUpperCase())).status).toBe(200);
    expect((await login(staff.user.email, recoveryCodes[0])).status).toBe(401);

    // Stored sealed and hashed: neither the secret nor a recovery code is in the database or a view.
    const stored = JSON.stringify(await users.findById(staff.user.id).select('+twoFactor').lean());
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(recoveryCodes[1]);
    const view = await fresh.get(`/users/${staff.user.id}`);
    expect(JSON.stringify(view.body)).not.toMatch(/pendingSecret|recoveryCodes|"secret"/);
    const logged = JSON.stringify(await records.find({ actorId: staff.user.id }).lean());
    expect(logged).not.toContain(secret);
    expect(logged).toContain('twoFactor.enable');
  });

  it('counts every code tried against the account, whichever IP sends it', async () => {
    const staff = await createSession(t, Role.Viewer);
    const { secret } = await enrol(staff);
    for (let i = 0; i < 9; i += 1) {
      expect((await login(staff.user.email, '000000', `10.1.0.${i + 1}`)).status).toBe(401);
    }
    // The tenth attempt of the window, from yet another address and with the right code, is refused.
    const blocked = await login(staff.user.email, await codeFor(secret, 1), '10.2.0.1');
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
  });

  it('disables with a valid code, and an admin resets another user’s factor (ending their tokens)', async () => {
    const staff = await createSession(t, Role.User);
    const { secret, enabled } = await enrol(staff);
    const signedIn = t.http.with({ authorization: `Bearer ${enabled.body.token}` });
    expect((await signedIn.post('/auth/2fa/disable', { code: '000000' })).status).toBe(400);
    const off = await signedIn.post('/auth/2fa/disable', { code: await codeFor(secret, 1) });
    expect(off.status).toBe(200);
    expect((await login(staff.user.email)).status).toBe(200);

    const again = await createSession(t, Role.User);
    const second = await enrol(again);
    const admin = await createSession(t, Role.Admin);
    const otherUser = await createSession(t, Role.User);
    expect((await otherUser.http.post(`/users/${again.user.id}/2fa/reset`, {})).status).toBe(403);
    expect((await admin.http.post(`/users/${again.user.id}/2fa/reset`, {})).status).toBe(200);
    const ended = t.http.with({ authorization: `Bearer ${second.enabled.body.token}` });
    expect((await ended.get('/auth/me')).status).toBe(401);
    expect((await login(again.user.email)).status).toBe(200);
    const reset = await records.findOne({ action: 'user.resetTwoFactor', targetId: again.user.id }).lean();
    expect(reset).toMatchObject({ actorId: admin.user.id, outcome: 'done', status: 200 });
  });
});

describe('Two-factor sign-in required for a role (TWO_FACTOR_REQUIRED_ROLES=admin)', () => {
  let t: TestApp;

  beforeAll(async () => {
    process.env.TWO_FACTOR_REQUIRED_ROLES = 'admin';
    t = await createTestApp();
  });
  afterAll(async () => {
    delete process.env.TWO_FACTOR_REQUIRED_ROLES;
    await t.close();
  });

  it('lets an admin without it only enrol (every other route 403 saying so); other roles are free', async () => {
    const admin = await createSession(t, Role.Admin);
    const signIn = await t.http.post('/auth/login', { email: admin.user.email, password: TEST_PASSWORD });
    expect(signIn.status).toBe(200);
    expect(signIn.body.user.twoFactorSetupRequired).toBe(true);

    const refused = await admin.http.get('/users');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/two-factor sign-in: set it up with POST \/auth\/2fa\/setup/);
    expect((await admin.http.get('/auth/me')).status).toBe(200);

    const setup = await admin.http.post('/auth/2fa/setup', {});
    const enabled = await admin.http.post('/auth/2fa/enable', {
      code: await codeFor(setup.body.data.secret),
    });
    expect(enabled.status).toBe(200);
    const enrolled = t.http.with({ authorization: `Bearer ${enabled.body.token}` });
    expect((await enrolled.get('/users')).status).toBe(200);

    const viewer = await createSession(t, Role.Viewer);
    expect((await viewer.http.get('/users')).status).toBe(200);
  });
});
