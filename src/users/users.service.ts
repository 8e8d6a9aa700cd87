import { ConflictException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectConnection, InjectModel } from '@nestjs/mongoose';
import * as bcrypt from 'bcrypt';
import { type Connection, isObjectIdOrHexString, Model, trusted, Types } from 'mongoose';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { findByIdOr404 } from '../common/database/object-id';
import { Role } from '../common/auth/roles';
import { CredentialChanges } from '../common/credentials/credential-changes';
import type { AppConfig } from '../config/env';
import { DeploymentFeatures } from '../database/deployment-features';
import type { CreateUserDto, ListUsersQuery, UpdateUserDto } from './dto/user-input.dto';
import { User } from './schemas/user.schema';

/** The fields the bearer guard needs to accept a token. */
export interface TokenSubject {
  _id: Types.ObjectId;
  email: string;
  firstName: string;
  lastName: string;
  role: Role;
  isActive: boolean;
  tokenVersion: number;
  twoFactorEnabled?: boolean;
  revokedTokens?: { jti: string; exp: Date }[];
}

export const LAST_ADMIN_MESSAGE = 'At least one active admin must remain';

/** Active admins: the users the last-admin rule keeps at one or more. */
const ACTIVE_ADMIN = { role: Role.Admin, isActive: true };

/**
 * The one document every transactional admin removal writes (`rule_guards`), so that two of them always
 * conflict: snapshot isolation alone lets two removals of different admins each count the other and both
 * commit (write skew). The conflict makes one of them retry and count again after the other's commit.
 */
export const LAST_ADMIN_GUARD = { collection: 'rule_guards', id: 'last-active-admin' } as const;

export const displayName = (user: Pick<User, 'firstName' | 'lastName'>) =>
  `${user.firstName} ${user.lastName}`.trim();

/** Flattens `{profile:{bio}}` into `{'profile.bio'}` so a partial update keeps the sibling fields. */
function dotted(prefix: string, value: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (inner === undefined) continue;
    const path = `${prefix}.${key}`;
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) Object.assign(out, dotted(path, inner));
    else out[path] = inner;
  }
  return out;
}

/** The value at a dotted path of a lean document (`profile.bio`), to restore it after a refused change. */
function valueAt(doc: object, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Whether the change can take away active-admin status (a role other than admin, or deactivation). */
const removesAdmin = (dto: Pick<UpdateUserDto, 'role' | 'isActive'>) =>
  (dto.role !== undefined && dto.role !== Role.Admin) || dto.isActive === false;

@Injectable()
export class UsersService {
  private readonly bcryptCost: number;

  constructor(
    @InjectModel(User.name) private readonly users: Model<User>,
    @InjectConnection() private readonly connection: Connection,
    private readonly deployment: DeploymentFeatures,
    private readonly changes: CredentialChanges,
    config: ConfigService<AppConfig, true>,
  ) {
    this.bcryptCost = config.get('BCRYPT_COST', { infer: true });
  }

  /** bcrypt at BCRYPT_COST, on libuv's thread pool (the event loop keeps serving). */
  hashPassword(password: string): Promise<string> {
    return bcrypt.hash(password, this.bcryptCost);
  }

  async list(query: ListUsersQuery): Promise<User[]> {
    const filter: Record<string, unknown> = {};
    if (query.role) filter.role = query.role;
    if (query.isActive !== undefined) filter.isActive = query.isActive;
    return this.users.find(filter).sort({ createdAt: -1 }).lean<User[]>().exec();
  }

  async create(dto: CreateUserDto): Promise<User> {
    const password = await this.hashPassword(dto.password);
    const created = await this.users.create({ ...dto, password });
    return this.get(String(created._id));
  }

  get(id: string): Promise<User> {
    return findByIdOr404(id, 'User not found', (_id) => this.users.findById(_id).lean<User>().exec());
  }

  /**
   * Any change of the record reaches the cached token subjects (role, state, name, e-mail), refused
   * changes too: a refused removal has written and put back.
   */
  async update(id: string, dto: UpdateUserDto): Promise<User> {
    try {
      return await this.applyUpdate(id, dto);
    } finally {
      await this.changes.announce('users');
    }
  }

  private async applyUpdate(id: string, dto: UpdateUserDto): Promise<User> {
    const current = await this.get(id);
    const { profile, settings, ...plain } = dto;
    const set: Record<string, unknown> = { ...plain };
    if (profile) Object.assign(set, dotted('profile', profile));
    if (settings) Object.assign(set, dotted('settings', settings));
    const revokesTokens =
      (dto.role !== undefined && dto.role !== current.role) || (dto.isActive === false && current.isActive);
    const update = { $set: set, ...(revokesTokens ? { $inc: { tokenVersion: 1 } } : {}) };
    if (removesAdmin(dto)) {
      await this.writeKeepingAnAdmin(id, set, update);
      return this.get(id);
    }
    const updated = await this.users
      .findByIdAndUpdate(id, update, { returnDocument: 'after', runValidators: true })
      .lean<User>()
      .exec();
    if (!updated) throw new NotFoundException('User not found');
    return updated;
  }

  /** Soft delete: the record stays, the user can no longer sign in, and their tokens stop working. */
  async deactivate(id: string): Promise<void> {
    await this.get(id);
    const set = { isActive: false };
    try {
      await this.writeKeepingAnAdmin(id, set, { $set: set, $inc: { tokenVersion: 1 } });
    } finally {
      await this.changes.announce('users');
    }
  }

  /**
   * Applies a change that may take away a user's active-admin status, refusing (409) one that would leave
   * no active admin: in a transaction where the deployment has them (a replica set or a sharded cluster),
   * by compensation on a standalone server and the dev stand-in. docs/operations/running-on-mongodb.md.
   */
  private writeKeepingAnAdmin(
    id: string,
    set: Record<string, unknown>,
    update: Record<string, unknown>,
  ): Promise<void> {
    return this.deployment.transactions
      ? this.writeKeepingAnAdminInTransaction(id, update)
      : this.writeKeepingAnAdminByCompensation(id, set, update);
  }

  /**
   * The write and the count of active admins after it commit together or not at all. Every such
   * transaction first writes the guard document, so concurrent removals conflict and the driver runs the
   * loser again (TransientTransactionError) against the winner's result. Majority commit: a decision an
   * election could roll back is never reported.
   */
  private async writeKeepingAnAdminInTransaction(id: string, update: Record<string, unknown>): Promise<void> {
    const guards = this.connection.db!.collection<{ _id: string }>(LAST_ADMIN_GUARD.collection);
    // Created outside the transaction (once, idempotent): two transactions inserting it would not conflict
    // as cleanly as two updating it.
    await guards.updateOne(
      { _id: LAST_ADMIN_GUARD.id },
      { $setOnInsert: { createdAt: new Date() } },
      { upsert: true },
    );
    await this.connection.transaction(
      async (session) => {
        await guards.updateOne({ _id: LAST_ADMIN_GUARD.id }, { $inc: { removals: 1 } }, { session });
        const before = await this.users
          .findByIdAndUpdate(id, update, { returnDocument: 'before', runValidators: true, session })
          .lean<User>()
          .exec();
        if (!before) throw new NotFoundException('User not found');
        const wasActiveAdmin = before.role === Role.Admin && before.isActive;
        if (wasActiveAdmin && !(await this.users.exists(ACTIVE_ADMIN).session(session))) {
          throw new ConflictException(LAST_ADMIN_MESSAGE);
        }
      },
      { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } },
    );
  }

  /**
   * Without transactions the rule is kept by ordering:
   * 1. a pre-check refuses the plain case (the only admin stepping down) without writing anything;
   * 2. the write returns the document as it was, so we know whether it removed an active admin then,
   *    whatever an earlier read said;
   * 3. if it did, the active admins are counted after the write, and at zero the written fields are put
   *    back as they were and the change is refused.
   * Every removal writes before it counts, so whichever removal counts last sees the others' writes: they
   * cannot all succeed and leave zero. Concurrent removals may instead all see zero and all be refused
   * (a safe over-refusal). The rolled-back user keeps its raised tokenVersion (it signs in again): lowering
   * it could revive tokens that a concurrent password change revoked. A process killed between the write
   * and the put-back can leave no active admin: the start-up repair (restoreAdminIfNone, with ADMIN_EMAIL
   * and ADMIN_PASSWORD set) restores one.
   */
  private async writeKeepingAnAdminByCompensation(
    id: string,
    set: Record<string, unknown>,
    update: Record<string, unknown>,
  ): Promise<void> {
    const target = { ...ACTIVE_ADMIN, _id: id };
    // `trusted`: our own operator (sanitizeFilter would strip it); `id` is a checked ObjectId by now.
    if (
      (await this.users.exists(target)) &&
      !(await this.users.exists({ ...ACTIVE_ADMIN, _id: trusted({ $ne: id }) }))
    ) {
      throw new ConflictException(LAST_ADMIN_MESSAGE);
    }
    const before = await this.users
      .findByIdAndUpdate(id, update, { returnDocument: 'before', runValidators: true })
      .lean<User>()
      .exec();
    if (!before) throw new NotFoundException('User not found');
    const wasActiveAdmin = before.role === Role.Admin && before.isActive;
    if (!wasActiveAdmin || (await this.users.exists(ACTIVE_ADMIN))) return;

    const restore: Record<string, unknown> = {};
    const unset: Record<string, ''> = {};
    for (const path of Object.keys(set)) {
      const value = valueAt(before, path);
      if (value === undefined) unset[path] = '';
      else restore[path] = value;
    }
    // Both fields, not only the one this change wrote: a concurrent change may have taken the other away
    // from the same user (one demotes while another deactivates), and restoring one alone left no admin.
    Object.assign(restore, ACTIVE_ADMIN);
    await this.users
      .updateOne({ _id: id }, { $set: restore, ...(Object.keys(unset).length ? { $unset: unset } : {}) })
      .exec();
    throw new ConflictException(LAST_ADMIN_MESSAGE);
  }

  /** Admins may change anyone's password; anyone may change their own. Earlier tokens stop working. */
  async changePassword(caller: AuthUser, id: string, password: string): Promise<void> {
    if (caller.role !== Role.Admin && caller.id !== id) {
      throw new ForbiddenException('You may only change your own password');
    }
    await this.get(id);
    const hash = await this.hashPassword(password);
    await this.users.updateOne({ _id: id }, { $set: { password: hash }, $inc: { tokenVersion: 1 } }).exec();
    await this.changes.announce('users');
  }

  /** For login: the user with the password hash, or null. */
  findByEmailWithPassword(
    email: string,
  ): Promise<(User & { password: string; tokenVersion: number }) | null> {
    return this.users
      .findOne({ email: email.trim().toLowerCase() })
      .select('+password +tokenVersion')
      .lean<User & { password: string; tokenVersion: number }>()
      .exec();
  }

  /** For the bearer guard: one lookup by `_id`. */
  findTokenSubject(id: string): Promise<TokenSubject | null> {
    if (!isObjectIdOrHexString(id)) return Promise.resolve(null);
    return this.users
      .findById(id)
      .select('email firstName lastName role isActive twoFactorEnabled +tokenVersion +revokedTokens')
      .lean<TokenSubject>()
      .exec();
  }

  /** Whether an active user of this service has this address (the unique `email` index serves it). */
  async isActiveUserAddress(email: string): Promise<boolean> {
    return (await this.users.exists({ email: email.trim().toLowerCase(), isActive: true })) !== null;
  }

  async recordLogin(id: Types.ObjectId): Promise<void> {
    await this.users
      .updateOne({ _id: id }, { $set: { lastLoginAt: new Date() }, $inc: { loginCount: 1 } })
      .exec();
  }

  /** Whether any active admin exists: someone can sign in and administer the service. */
  async hasActiveAdmin(): Promise<boolean> {
    return (await this.users.exists(ACTIVE_ADMIN)) !== null;
  }

  /**
   * Start-up repair for a service left without an active admin: reactivates and promotes the ADMIN_EMAIL
   * user (its password is kept; its tokens are revoked as for any role change). Does nothing while some
   * other active admin exists, so an operator's deliberate demotion of that account stands.
   */
  async restoreAdminIfNone(email: string): Promise<boolean> {
    if (await this.users.exists(ACTIVE_ADMIN)) return false;
    const result = await this.users
      .updateOne(
        { email: email.trim().toLowerCase() },
        { $set: { role: Role.Admin, isActive: true }, $inc: { tokenVersion: 1 } },
      )
      .exec();
    if (result.modifiedCount === 1) await this.changes.announce('users');
    return result.modifiedCount === 1;
  }

  /**
   * Creates the bootstrap admin unless a user with that e-mail exists. An upsert with `$setOnInsert`, so
   * several instances starting together create it once and an existing password is never overwritten.
   */
  async ensureAdmin(email: string, password: string): Promise<boolean> {
    const normalized = email.trim().toLowerCase();
    if (await this.users.exists({ email: normalized })) return false;
    const hash = await this.hashPassword(password);
    const result = await this.users
      .updateOne(
        { email: normalized },
        {
          $setOnInsert: {
            email: normalized,
            password: hash,
            firstName: 'Admin',
            lastName: '',
            role: Role.Admin,
            isActive: true,
            profile: { timezone: 'UTC', language: 'en' },
            settings: { notifications: { email: true, push: false }, theme: 'auto' },
            loginCount: 0,
            tokenVersion: 0,
          },
        },
        { upsert: true, timestamps: true },
      )
      .exec();
    return result.upsertedCount === 1;
  }
}
