import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model, trusted } from 'mongoose';
import { CredentialChanges } from '../common/credentials/credential-changes';
import { TwoFactorState, User } from './schemas/user.schema';

/**
 * Signed-out tokens kept per user. Past this many unexpired ones, signing out ends every token of the user
 * instead (a token version bump), so the list, read with the user on every request, stays small.
 */
export const REVOKED_TOKENS_MAX = 20;

/**
 * The sign-in credentials a user holds besides the password: the TOTP factor and the sessions (token
 * version and signed-out tokens). The auth module's only way to change them; users.service.ts keeps the
 * profile and the last-admin rule.
 */
@Injectable()
export class StaffCredentialsService {
  constructor(
    @InjectModel(User.name) private readonly users: Model<User>,
    private readonly changes: CredentialChanges,
  ) {}

  /** The two-factor state, secrets included (sealed): only for checking a code. */
  async twoFactorOf(id: string): Promise<TwoFactorState | null> {
    if (!isObjectIdOrHexString(id)) return null;
    const user = await this.users.findById(id).select('+twoFactor').lean<Pick<User, 'twoFactor'>>().exec();
    return user?.twoFactor ?? null;
  }

  /** Stores a new, unconfirmed secret; an enabled factor stays as it is until `enable` confirms this one. */
  async storePendingSecret(id: string, sealed: string): Promise<void> {
    await this.users.updateOne({ _id: id }, { $set: { 'twoFactor.pendingSecret': sealed } }).exec();
  }

  /**
   * Turns the pending secret into the factor, with its recovery codes and the step of the code that
   * confirmed it (no replay of that code). Ends the user's earlier tokens. False when the pending secret
   * changed meanwhile (another set-up): the caller's code was for the old one.
   */
  async enable(id: string, sealed: string, step: number, recoveryHashes: string[]): Promise<boolean> {
    const twoFactor: TwoFactorState = { secret: sealed, lastStep: step, recoveryCodes: recoveryHashes };
    const result = await this.users
      .updateOne(
        { _id: id, 'twoFactor.pendingSecret': sealed },
        { $set: { twoFactor, twoFactorEnabled: true }, $inc: { tokenVersion: 1 } },
      )
      .exec();
    if (result.modifiedCount === 1) await this.changes.announce('users');
    return result.modifiedCount === 1;
  }

  /** Removes the factor (disable, or an admin's reset); a reset also ends the user's tokens. */
  async removeFactor(id: string, endSessions: boolean): Promise<void> {
    const result = await this.users
      .updateOne(
        { _id: id },
        {
          $set: { twoFactorEnabled: false },
          $unset: { twoFactor: '' },
          ...(endSessions ? { $inc: { tokenVersion: 1 } } : {}),
        },
      )
      .exec();
    if (result.matchedCount === 0) throw new NotFoundException('User not found');
    await this.changes.announce('users');
  }

  /**
   * Records that a code of time step `step` was used, unless one of that step or a later one was: one
   * conditional write, so two instances given the same code accept it once between them.
   */
  async claimStep(id: string, step: number): Promise<boolean> {
    const result = await this.users
      .updateOne(
        {
          _id: id,
          twoFactorEnabled: true,
          $or: [{ 'twoFactor.lastStep': trusted({ $lt: step }) }, { 'twoFactor.lastStep': null }],
        },
        { $set: { 'twoFactor.lastStep': step } },
      )
      .exec();
    return result.modifiedCount === 1;
  }

  /** Uses up one recovery code by its hash; false when it is not (or no longer) one of the user's. */
  async useRecoveryCode(id: string, hash: string): Promise<boolean> {
    const result = await this.users
      .updateOne(
        { _id: id, twoFactorEnabled: true, 'twoFactor.recoveryCodes': hash },
        { $pull: { 'twoFactor.recoveryCodes': hash } },
      )
      .exec();
    return result.modifiedCount === 1;
  }

  /** Ends every token of the user, on every instance within a second (CredentialChanges). */
  async endAllSessions(id: string): Promise<void> {
    const result = await this.users.updateOne({ _id: id }, { $inc: { tokenVersion: 1 } }).exec();
    if (result.matchedCount === 0) throw new NotFoundException('User not found');
    await this.changes.announce('users');
  }

  /**
   * Ends one token (its `jti`) until it expires. Expired entries are dropped first; when the list is full
   * of live ones, every token of the user is ended instead, which also ends this one.
   */
  async endSession(id: string, jti: string, expiresAt: Date): Promise<void> {
    await this.users
      .updateOne({ _id: id }, { $pull: { revokedTokens: { exp: trusted({ $lte: new Date() }) } } })
      .exec();
    const added = await this.users
      .updateOne(
        { _id: id, [`revokedTokens.${REVOKED_TOKENS_MAX - 1}`]: trusted({ $exists: false }) },
        { $push: { revokedTokens: { jti, exp: expiresAt } } },
      )
      .exec();
    if (added.modifiedCount === 0) await this.endAllSessions(id);
    else await this.changes.announce('users');
  }
}
