import { getModelToken } from '@nestjs/mongoose';
import * as bcrypt from 'bcrypt';
import type { Model } from 'mongoose';
import { TokenService } from '../../src/auth/token.service';
import { Role } from '../../src/common/auth/roles';
import { User } from '../../src/users/schemas/user.schema';
import type { TestApp } from './app';
import type { HttpClient } from './http';

export const TEST_PASSWORD = 'correct-horse-battery';

/** bcrypt at cost 12 takes ~0.3 s; tests reuse one hash (cost 4) for the users they seed. */
let passwordHash: string | undefined;
const testPasswordHash = () => (passwordHash ??= bcrypt.hashSync(TEST_PASSWORD, 4));

let counter = 0;

export interface Session {
  user: { id: string; email: string; role: Role };
  token: string;
  /** An HTTP client that sends this user's bearer token. */
  http: HttpClient;
}

/** Seeds an active admin user of the given role and returns a signed-in client for it. */
export async function createSession(
  t: TestApp,
  role: Role = Role.Admin,
  overrides: Partial<User> = {},
): Promise<Session> {
  const users = t.app.get<Model<User>>(getModelToken(User.name));
  counter += 1;
  const created = await users.create({
    email: `${role}-${counter}-${Date.now()}@example.com`,
    password: testPasswordHash(),
    firstName: 'Test',
    lastName: `${role} ${counter}`,
    role,
    ...overrides,
  });
  const token = await t.app.get(TokenService).sign({ sub: String(created._id), role, tv: 0 });
  return {
    user: { id: String(created._id), email: created.email, role },
    token,
    http: t.http.with({ authorization: `Bearer ${token}` }),
  };
}

/** Sessions for the three roles, e.g. for role × route checks. */
export async function createSessions(t: TestApp): Promise<Record<Role, Session>> {
  return {
    [Role.Admin]: await createSession(t, Role.Admin),
    [Role.User]: await createSession(t, Role.User),
    [Role.Viewer]: await createSession(t, Role.Viewer),
  };
}
