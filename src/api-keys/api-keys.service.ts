import { literalSource } from '../common/database/text-pattern';
import { ConflictException, Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted, type PipelineStage, type QueryFilter } from 'mongoose';
import { APP_DELETED, type AppDeletedEvent } from '../apps/app-events';
import { AppsService } from '../apps/apps.service';
import { App, APPS_COLLECTION } from '../apps/schemas/app.schema';
import type { CredentialCache } from '../common/credentials/credential-cache';
import { CredentialChanges } from '../common/credentials/credential-changes';
import { decryptSecret, encryptSecret } from '../common/crypto/secret-box';
import { findByIdOr404 } from '../common/database/object-id';
import { patchUpdate } from '../common/database/patch-update';
import type { Pagination } from '../common/http/envelope';
import { findPage } from '../common/pagination/pagination';
import { SecretKeys } from '../config/secret-keys';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-value';
import type { ApiKeyAppStats, ApiKeyStatsView } from './dto/api-key.dto';
import type { CreateApiKeyDto, ListApiKeysQuery, UpdateApiKeyDto } from './dto/api-key-input.dto';
import { ApiKey } from './schemas/api-key.schema';

/** `lastUsed` is written at most once per key and interval, so busy keys do not cost a write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** What the API-key guard needs to decide on a request: the key and the state of its app (null: no app). */
export type ApiKeyCredential = Pick<
  ApiKey,
  '_id' | 'appId' | 'isActive' | 'expiresAt' | 'allowedOrigins' | 'lastUsed'
> & { app: Pick<App, 'id' | 'active'> | null };

const NOT_FOUND = 'API key not found';

/** What `GET /api-keys/{keyId}` answers when the stored copy cannot be decrypted (409). */
export const FOREIGN_SECRET_ERROR =
  'This key was encrypted with a different APP_SECRET, so its value cannot be shown; the key still ' +
  'works. Regenerate it (POST /api-keys/{keyId}/regenerate) to get a new value, or create a new key';

/** Fields that may be cleared with `null` on update; `null` elsewhere is a 400. */
const CLEARABLE = ['description', 'expiresAt'] as const;

/** Stands for "no expiry" in the stats pipeline: the latest date JavaScript can represent. */
const NEVER = new Date(8.64e15);

/** `active` is what remains once revoked and expired keys are counted out. */
const counters = (row: ApiKeyAppStats): ApiKeyAppStats => ({
  total: row.total,
  active: row.total - row.inactive - row.expired,
  inactive: row.inactive,
  expired: row.expired,
});

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);
  private readonly encryptionKey: Buffer;
  /** What `findCredential` read, by the value's SHA-256 (null: no key has that hash). */
  private readonly credentials: CredentialCache<ApiKeyCredential | null>;

  constructor(
    @InjectModel(ApiKey.name) private readonly keys: Model<ApiKey>,
    private readonly apps: AppsService,
    private readonly changes: CredentialChanges,
    secretKeys: SecretKeys,
  ) {
    this.encryptionKey = secretKeys.apiKeyEncryption;
    // The entries carry the app's state too: switching an app off clears them as a key's revocation does.
    this.credentials = changes.cache(['api-keys', 'apps']);
  }

  /**
   * `inactive`: revoked or switched off; `expired`: still active but past `expiresAt`; `active`: the rest,
   * i.e. the keys that work. The three add up to `total`, overall and per app.
   */
  async stats(appId?: string): Promise<ApiKeyStatsView> {
    const now = new Date();
    const pipeline: PipelineStage[] = [
      ...(appId ? [{ $match: { appId } }] : []),
      {
        $group: {
          _id: '$appId',
          total: { $sum: 1 },
          inactive: { $sum: { $cond: [{ $eq: ['$isActive', false] }, 1, 0] } },
          expired: {
            $sum: {
              $cond: [
                {
                  $and: [{ $ne: ['$isActive', false] }, { $lte: [{ $ifNull: ['$expiresAt', NEVER] }, now] }],
                },
                1,
                0,
              ],
            },
          },
        },
      },
    ];
    const rows = await this.keys.aggregate<ApiKeyAppStats & { _id: string }>(pipeline).exec();
    const byApp: Record<string, ApiKeyAppStats> = {};
    const overall: ApiKeyAppStats = { total: 0, active: 0, inactive: 0, expired: 0 };
    for (const row of rows.sort((a, b) => a._id.localeCompare(b._id))) {
      byApp[row._id] = counters(row);
      overall.total += row.total;
      overall.inactive += row.inactive;
      overall.expired += row.expired;
    }
    return { ...counters(overall), byApp };
  }

  async list(query: ListApiKeysQuery): Promise<{ items: ApiKey[]; pagination: Pagination }> {
    const filter: QueryFilter<ApiKey> = {};
    if (query.appId) filter.appId = query.appId;
    if (query.isActive !== undefined) filter.isActive = query.isActive;
    if (query.search) {
      const pattern = trusted({ $regex: literalSource(query.search), $options: 'i' });
      filter.$or = [{ name: pattern }, { description: pattern }];
    }
    return findPage(this.keys, {
      filter,
      sort: { [query.sortBy]: query.sortOrder === 'asc' ? 1 : -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  /** The new record and its value (shown to the caller; only its hash and ciphertext are stored). */
  async create(dto: CreateApiKeyDto, createdBy: string): Promise<{ key: ApiKey; value: string }> {
    await this.apps.requireApp(dto.appId);
    const value = generateApiKey(dto.appId);
    const created = await this.keys.create({ ...dto, createdBy, ...this.sealed(value) });
    return { key: await this.get(String(created._id)), value };
  }

  get(id: string): Promise<ApiKey> {
    return findByIdOr404(id, NOT_FOUND, (_id) => this.keys.findById(_id).lean<ApiKey>().exec());
  }

  /**
   * The record and its decrypted value (for admins only). The copy is sealed with a key derived from
   * `APP_SECRET`: after the secret changes it fails its authentication tag, which is the operator's doing
   * (a 409 saying so), not a fault of the service. The key itself still works: requests check its hash.
   */
  async getWithValue(id: string): Promise<{ key: ApiKey; value: string }> {
    const key = await findByIdOr404(id, NOT_FOUND, (_id) =>
      this.keys.findById(_id).select('+encryptedKey').lean<ApiKey>().exec(),
    );
    const { encryptedKey, ...rest } = key;
    let value: string;
    try {
      value = decryptSecret(encryptedKey, this.encryptionKey);
    } catch (error) {
      this.logger.warn(`API key ${id}: stored value not readable (${(error as Error).message})`);
      throw new ConflictException(FOREIGN_SECRET_ERROR);
    }
    return { key: rest as ApiKey, value };
  }

  async update(id: string, dto: UpdateApiKeyDto): Promise<ApiKey> {
    return this.updateById(id, patchUpdate(dto, CLEARABLE));
  }

  revoke(id: string): Promise<ApiKey> {
    return this.updateById(id, { $set: { isActive: false } });
  }

  /** Same record, new value: the old value stops matching at once, since its hash is replaced. */
  async regenerate(id: string): Promise<{ key: ApiKey; value: string }> {
    const current = await this.get(id);
    const value = generateApiKey(current.appId);
    const key = await this.updateById(id, { $set: this.sealed(value) });
    return { key, value };
  }

  async remove(id: string): Promise<void> {
    await findByIdOr404(id, NOT_FOUND, (_id) => this.keys.findByIdAndDelete(_id).lean().exec());
    await this.changes.announce('api-keys');
  }

  /** A deleted app takes its keys with it, so a later app reusing the id cannot inherit them. */
  @OnEvent(APP_DELETED, { suppressErrors: false })
  async removeAppKeys(event: AppDeletedEvent): Promise<void> {
    await this.keys.deleteMany({ appId: event.appId }).exec();
    await this.changes.announce('api-keys');
  }

  /**
   * Whether `value` is certainly nobody's key, answered without I/O: it is not of the key format, or its hash
   * is cached as matching no key and the cache is fresh. False means "ask findCredential".
   */
  isKnownUnknown(value: string): boolean {
    if (!isWellFormedApiKey(value)) return true;
    return this.changes.fresh() && this.credentials.get(hashApiKey(value)) === null;
  }

  /**
   * For the guard: the key by the value's hash and its app, from the credential cache (a revoked key or a
   * switched-off app leaves it on every instance within a second: CredentialChanges), else read in one
   * command. An unknown value is cached as null too, so a client repeating a deleted key costs no lookup;
   * a new value cannot be among them (256 random bits). Null for a malformed or unknown value.
   */
  async findCredential(value: string): Promise<ApiKeyCredential | null> {
    if (!isWellFormedApiKey(value)) return null;
    const pending = this.changes.current();
    if (pending) await pending;
    const hash = hashApiKey(value);
    const cached = this.credentials.get(hash);
    if (cached !== undefined) return cached;
    const generation = this.credentials.generation;
    const found = await this.readCredential(hash);
    this.credentials.store(hash, found, generation);
    return found;
  }

  /** The key by its unique hash and its app by its unique id, in one command (a `$lookup`). */
  private async readCredential(keyHash: string): Promise<ApiKeyCredential | null> {
    const fields = { appId: 1, isActive: 1, expiresAt: 1, allowedOrigins: 1, lastUsed: 1 };
    const [found] = await this.keys
      .aggregate<Omit<ApiKeyCredential, 'app'> & { app?: Pick<App, 'id' | 'active'> }>([
        { $match: { keyHash } },
        { $limit: 1 },
        { $lookup: { from: APPS_COLLECTION, localField: 'appId', foreignField: 'id', as: 'apps' } },
        // In two steps: the dev database projects fields of an array's documents wrongly.
        { $project: { ...fields, app: { $arrayElemAt: ['$apps', 0] } } },
        { $project: { ...fields, 'app.id': 1, 'app.active': 1 } },
      ])
      .exec();
    if (!found) return null;
    return { ...found, app: found.app ?? null };
  }

  /**
   * Records use at most once per LAST_USED_RESOLUTION_MS: skipped when the read copy is recent, and the
   * write is conditional, so concurrent requests of one key write once. `updatedAt` is left alone.
   */
  async touchLastUsed(credential: ApiKeyCredential, now = new Date()): Promise<void> {
    const threshold = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    if (credential.lastUsed && credential.lastUsed > threshold) return;
    // The cached copy: this instance skips the next minute's writes whoever wins the conditional write.
    credential.lastUsed = now;
    await this.keys
      .updateOne(
        {
          _id: credential._id,
          $or: [{ lastUsed: trusted({ $exists: false }) }, { lastUsed: trusted({ $lte: threshold }) }],
        },
        { $set: { lastUsed: now } },
        { timestamps: false },
      )
      .exec();
  }

  private sealed(value: string): { keyHash: string; encryptedKey: string } {
    return { keyHash: hashApiKey(value), encryptedKey: encryptSecret(value, this.encryptionKey) };
  }

  /** Every change of a key may revoke it (active, expiry, allowed origins, value). */
  private async updateById(id: string, update: Record<string, unknown>): Promise<ApiKey> {
    const key = await findByIdOr404(id, NOT_FOUND, (_id) =>
      this.keys
        .findByIdAndUpdate(_id, update, { returnDocument: 'after', runValidators: true })
        .lean<ApiKey>()
        .exec(),
    );
    await this.changes.announce('api-keys');
    return key;
  }
}
