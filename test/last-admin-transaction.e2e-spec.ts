import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { Role } from '../src/common/auth/roles';
import { DeploymentFeatures } from '../src/database/deployment-features';
import { User } from '../src/users/schemas/user.schema';
import { LAST_ADMIN_GUARD, LAST_ADMIN_MESSAGE } from '../src/users/users.service';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { type FaultAction, MongoFaultProxy, type SeenCommand } from './helpers/mongo-fault-proxy';
import { createSession } from './helpers/session';

/** What a replica set answers the loser of two concurrent transactions on one document. */
const WRITE_CONFLICT: FaultAction = {
  kind: 'answer',
  reply: {
    ok: 0,
    code: 112,
    codeName: 'WriteConflict',
    errmsg: 'Write conflict during plan execution',
    errorLabels: ['TransientTransactionError'],
  },
};

/**
 * The last-admin rule's transactional path (UsersService, docs/operations/running-on-mongodb.md), run by the
 * real driver: a wire-protocol proxy presents the dev database as a one-member replica set with sessions, so
 * the driver opens sessions, starts, commits, aborts and retries transactions, and the proxy records every
 * command. The proxy is no transaction engine (an aborted transaction's writes stay), so a refusal is
 * checked by the commands the service sent: the abort, and no commit.
 */
describe('The last-admin rule in a transaction (a session-capable proxy)', () => {
  const databaseUri = process.env.MONGODB_URI!;
  let proxy: MongoFaultProxy;
  let t: TestApp;
  let fault: ((command: SeenCommand) => FaultAction | undefined) | null = null;

  beforeAll(async () => {
    proxy = await MongoFaultProxy.start(databaseUri, {
      replicaSet: true,
      onCommand: (command) => fault?.(command),
    });
    process.env.MONGODB_URI = proxy.uriFor(databaseUri);
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
    process.env.MONGODB_URI = databaseUri;
  });
  beforeEach(async () => {
    fault = null;
    await resetDatabase(t.connection);
  });

  const users = () => t.app.get<Model<User>>(getModelToken(User.name));
  const guard = () =>
    t.connection.db!.collection<{ _id: string; removals?: number }>(LAST_ADMIN_GUARD.collection).findOne({
      _id: LAST_ADMIN_GUARD.id,
    });
  /** The commands of the transactions sent from `from` on, in order, with their session fields. */
  const transactional = (from: number) =>
    proxy.commands.slice(from).filter((command) => command.body.autocommit === false);
  const ended = (from: number, name: string) =>
    proxy.named(name).filter((c) => proxy.commands.indexOf(c) >= from);

  it('reads the deployment as one with transactions', () => {
    expect(t.app.get(DeploymentFeatures).transactions).toBe(true);
  });

  it('demotes one of two admins in one transaction (guard, update, count), committed by majority', async () => {
    const admin = await createSession(t, Role.Admin);
    const other = await createSession(t, Role.Admin);
    const from = proxy.commands.length;

    expect((await admin.http.patch(`/users/${other.user.id}`, { role: 'user' })).status).toBe(200);

    const inTransaction = transactional(from);
    expect(inTransaction.map((command) => `${command.name} ${command.collection ?? ''}`.trim())).toEqual([
      `update ${LAST_ADMIN_GUARD.collection}`,
      'findAndModify users',
      'find users',
      'commitTransaction',
    ]);
    const [first] = inTransaction;
    expect(first.body).toMatchObject({ startTransaction: true, readConcern: { level: 'snapshot' } });
    for (const command of inTransaction) {
      expect(command.body.lsid).toEqual(first.body.lsid);
      expect(command.body.txnNumber).toEqual(first.body.txnNumber);
    }
    expect(inTransaction[3].body.writeConcern).toMatchObject({ w: 'majority' });
    expect(await users().findById(other.user.id).lean().exec()).toMatchObject({ role: Role.User });
    expect((await guard())?.removals).toBe(1);
  });

  it('refuses to leave no active admin: the transaction is aborted, never committed (409)', async () => {
    const admin = await createSession(t, Role.Admin);
    const from = proxy.commands.length;

    const refused = await admin.http.patch(`/users/${admin.user.id}`, { role: 'user' });

    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ success: false, error: LAST_ADMIN_MESSAGE });
    const names = transactional(from).map((command) => command.name);
    expect(names).toEqual(['update', 'findAndModify', 'find', 'abortTransaction']);
    expect(ended(from, 'commitTransaction')).toEqual([]);
  });

  it('runs the loser of a write conflict again (TransientTransactionError) and commits once', async () => {
    const admin = await createSession(t, Role.Admin);
    const other = await createSession(t, Role.Admin);
    const from = proxy.commands.length;
    let conflicts = 0;
    fault = (command) => {
      const first =
        command.body.startTransaction === true && command.collection === LAST_ADMIN_GUARD.collection;
      if (!first || conflicts > 0) return undefined;
      conflicts += 1;
      return WRITE_CONFLICT;
    };

    expect((await admin.http.delete(`/users/${other.user.id}`)).status).toBe(200);

    const started = transactional(from).filter((command) => command.body.startTransaction === true);
    expect(started).toHaveLength(2);
    expect(Number(started[1].body.txnNumber)).toBeGreaterThan(Number(started[0].body.txnNumber));
    expect(ended(from, 'commitTransaction')).toHaveLength(1);
    expect(await users().findById(other.user.id).lean().exec()).toMatchObject({ isActive: false });
    // The conflicting attempt's guard write never reached the database; the retry's did.
    expect((await guard())?.removals).toBe(1);
  });
});
