import { Role } from '../src/common/auth/roles';
import {
  DeploymentFeatures,
  describeDeployment,
  helloOf,
  type HelloReply,
  supportsTransactions,
} from '../src/database/deployment-features';
import { LAST_ADMIN_GUARD, UsersService } from '../src/users/users.service';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { createSession } from './helpers/session';

/**
 * Which way the last-admin rule is kept depends on the deployment (docs/operations/running-on-mongodb.md). No
 * replica set can run on this machine, so the transactional path is shown to be chosen, not shown to commit:
 * the dev stand-in has no sessions and the driver refuses it before anything is written.
 */

// The handshake fields of each kind of deployment, as MongoDB 7 answers `hello` (other fields left out).
const STANDALONE: HelloReply = { logicalSessionTimeoutMinutes: 30 };
const REPLICA_SET_PRIMARY: HelloReply = { setName: 'rs0', logicalSessionTimeoutMinutes: 30 };
const MONGOS: HelloReply = { msg: 'isdbgrid', logicalSessionTimeoutMinutes: 30 };

describe('Deployment features', () => {
  it.each<[string, HelloReply, boolean]>([
    ['a standalone server', STANDALONE, false],
    ['a replica-set member', REPLICA_SET_PRIMARY, true],
    ['a mongos', MONGOS, true],
    ['a replica-set member without sessions', { setName: 'rs0' }, false],
  ])('reads transactions from the handshake of %s', (_name, reply, expected) => {
    expect(supportsTransactions(reply)).toBe(expected);
  });

  it('names the deployment for the start-up line', () => {
    expect(describeDeployment(REPLICA_SET_PRIMARY)).toBe('replica set rs0');
    expect(describeDeployment(MONGOS)).toBe('a sharded cluster (mongos)');
    expect(describeDeployment(STANDALONE)).toBe('a single server without replication');
  });
});

describe('The last-admin rule on the dev database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('reads the stand-in as a deployment without transactions (it answers only the legacy handshake)', async () => {
    expect(supportsTransactions(await helloOf(t.connection.db!))).toBe(false);
    expect(t.app.get(DeploymentFeatures).transactions).toBe(false);
  });

  it('keeps the rule by compensation there: the only admin stepping down is refused', async () => {
    await resetDatabase(t.connection);
    const admin = await createSession(t, Role.Admin);
    expect((await admin.http.patch(`/users/${admin.user.id}`, { role: 'user' })).status).toBe(409);
    // The compensation path never touches the transactions' guard document.
    expect(await t.connection.db!.collection(LAST_ADMIN_GUARD.collection).countDocuments()).toBe(0);
  });
});

describe('The last-admin rule where the deployment has transactions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      overrides: [
        {
          provide: DeploymentFeatures,
          useValue: { transactions: supportsTransactions(REPLICA_SET_PRIMARY) },
        },
      ],
    });
  });
  afterAll(() => t.close());

  it('runs the removal in a transaction (refused by the stand-in, which has no sessions) and changes nothing', async () => {
    await resetDatabase(t.connection);
    const admin = await createSession(t, Role.Admin);
    const other = await createSession(t, Role.Admin);
    const users = t.app.get(UsersService);

    await expect(users.update(other.user.id, { role: Role.User })).rejects.toThrow(
      /does not support sessions/,
    );
    await expect(users.deactivate(other.user.id)).rejects.toThrow(/does not support sessions/);

    expect(await users.get(other.user.id)).toMatchObject({ role: Role.Admin, isActive: true });
    // The guard exists (created outside the transaction), but no transactional write reached it.
    const guard = await t.connection
      .db!.collection<{ _id: string }>(LAST_ADMIN_GUARD.collection)
      .findOne({ _id: LAST_ADMIN_GUARD.id });
    expect(guard).not.toBeNull();
    expect(guard).not.toHaveProperty('removals');
    // Changes that cannot remove an admin never need the transaction.
    expect((await admin.http.patch(`/users/${other.user.id}`, { firstName: 'Renamed' })).status).toBe(200);
  });
});
