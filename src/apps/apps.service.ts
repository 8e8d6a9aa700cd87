import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import type { CredentialCache } from '../common/credentials/credential-cache';
import { CredentialChanges } from '../common/credentials/credential-changes';
import { patchUpdate } from '../common/database/patch-update';
import { SendingIdentities } from '../sender-domains/sending-identities';
import { APP_DELETED, AppDeletedEvent } from './app-events';
import type { CreateAppDto, ListAppsQuery, UpdateAppDto } from './dto/app-input.dto';
import { App, RETIRED_KEYS_KEPT } from './schemas/app.schema';

/** `pk_` + 192 random bits: publishable, but unguessable so it cannot be enumerated. */
export const generatePublicKey = () => `pk_${randomBytes(24).toString('hex')}`;

/** A sender as stored: a field not sent is absent, not null. */
const withoutUndefined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as T;
/** The 409 of a toggle that lost every attempt to concurrent writes. */
export const APP_CHANGED_CONCURRENTLY = 'The app changed concurrently; try again';

/** Conditional writes (toggle, rotate-key) retried this often against concurrent ones before a 409. */
const TOGGLE_ATTEMPTS = 3;

/** The one answer to an unknown app, wherever a route names one (path or body): 404 with this message. */
export const APP_NOT_FOUND = 'App not found';

/** Who holds a publishable key: its app, `retired` when rotate-key replaced it, or null when unknown. */
export type PublicKeyHolder = App | 'retired' | null;

/** The holder cache's key of a publishable key. */
function holderKey(publicKey: string): string {
  return createHash('sha256').update(publicKey).digest('base64url');
}

/** App records. Other modules use `requireApp` / `requireActiveApp` to check the `{appId}` of a path. */
@Injectable()
export class AppsService {
  /**
   * `publicKeyHolder` answers by the key's SHA-256 (a page's key is public, but a lookup key all the same).
   */
  private readonly holders: CredentialCache<PublicKeyHolder>;
  private readonly byId: CredentialCache<App>;

  constructor(
    @InjectModel(App.name) private readonly apps: Model<App>,
    private readonly events: EventEmitter2,
    private readonly identities: SendingIdentities,
    private readonly changes: CredentialChanges,
  ) {
    this.holders = changes.cache(['apps']);
    this.byId = changes.cache(['apps']);
  }

  /**
   * The app by its id, from the credential cache when this instance read it before (a change of the app
   * leaves it within a second: CredentialChanges); an unknown id is read each time, so an app created on
   * another instance is found at once.
   */
  async findByAppId(appId: string): Promise<App | null> {
    const pending = this.changes.current();
    if (pending) await pending;
    const cached = this.byId.get(appId);
    if (cached) return cached;
    const generation = this.byId.generation;
    const app = await this.apps.findOne({ id: appId }).lean<App>().exec();
    if (app) this.byId.store(appId, app, generation);
    return app;
  }

  /**
   * For the publishable-key guard, from the credential cache (an app's change leaves it on every instance
   * within a second: CredentialChanges), else one lookup on the unique `publicKey` index (and one on the
   * retired keys when it finds nothing). Unknown keys are cached too: a page repeating one costs no lookup.
   */
  async publicKeyHolder(publicKey: string): Promise<PublicKeyHolder> {
    const pending = this.changes.current();
    if (pending) await pending;
    const hash = holderKey(publicKey);
    const cached = this.holders.get(hash);
    if (cached !== undefined) return cached;
    const generation = this.holders.generation;
    const holder =
      (await this.apps.findOne({ publicKey }).lean<App>().exec()) ??
      ((await this.apps.exists({ retiredPublicKeys: publicKey })) ? 'retired' : null);
    this.holders.store(hash, holder, generation);
    return holder;
  }

  /**
   * Whether no app holds `publicKey`, now or before a rotation, answered without I/O: its hash is cached as
   * nobody's and the cache is fresh. False means "ask publicKeyHolder".
   */
  isKnownUnknownPublicKey(publicKey: string): boolean {
    return this.changes.fresh() && this.holders.get(holderKey(publicKey)) === null;
  }

  /** The app, or 404 when no app has this id. */
  async requireApp(appId: string): Promise<App> {
    const app = await this.findByAppId(appId);
    if (!app) throw new NotFoundException(APP_NOT_FOUND);
    return app;
  }

  /** The app, or 404 when it does not exist or is inactive (public endpoints do not reveal which). */
  async requireActiveApp(appId: string): Promise<App> {
    const app = await this.findByAppId(appId);
    if (!app || !app.active) throw new NotFoundException(APP_NOT_FOUND);
    return app;
  }

  /** Apps by name; only the active ones when `activeOnly` is true. */
  list(query: ListAppsQuery = {}): Promise<App[]> {
    const filter = query.activeOnly ? { active: true } : {};
    return this.apps.find(filter).sort({ name: 1, id: 1 }).lean<App[]>().exec();
  }

  /** A taken `id` is a 409 through the unique index. */
  async create(dto: CreateAppDto): Promise<App> {
    if (dto.sender) await this.identities.assertMayUse(dto.id, dto.sender.email, 'sender.email');
    const sender = dto.sender && withoutUndefined(dto.sender);
    const created = await this.apps.create({ ...dto, sender, publicKey: generatePublicKey() });
    // A record of a deleted app with this id may still be cached on an instance that missed the delete.
    await this.changes.announce('apps');
    return this.requireApp(created.id);
  }

  /** The fields sent; `description: null` and `sender: null` remove those, `null` elsewhere is a 400. */
  async update(appId: string, dto: UpdateAppDto): Promise<App> {
    if (dto.sender) await this.identities.assertMayUse(appId, dto.sender.email, 'sender.email');
    const sender = dto.sender && withoutUndefined(dto.sender);
    const updated = await this.apps
      .findOneAndUpdate({ id: appId }, patchUpdate({ ...dto, sender }, ['description', 'sender']), {
        returnDocument: 'after',
        runValidators: true,
      })
      .lean<App>()
      .exec();
    if (!updated) throw new NotFoundException(APP_NOT_FOUND);
    this.identities.forget(appId);
    // Its allowed origins and its state decide who its keys admit.
    await this.changes.announce('apps');
    return updated;
  }

  /**
   * Deletes the app record after the `app.deleted` listeners ran (the API-keys module deletes the app's
   * keys there). Tenant data (tickets, contacts, subscribers, …) is kept for the record and for GDPR
   * requests; without the app and its keys no client can reach it any more.
   */
  async remove(appId: string): Promise<void> {
    await this.requireApp(appId);
    const event: AppDeletedEvent = { appId };
    await this.events.emitAsync(APP_DELETED, event);
    await this.apps.deleteOne({ id: appId }).exec();
    await this.changes.announce('apps');
  }

  /**
   * A new publishable key; the old one stops matching at once (the guard looks the key up every time) and
   * joins the retired keys. The write is conditional on the key it replaces, so two concurrent rotations
   * never lose a retired key.
   */
  async rotateKey(appId: string): Promise<{ id: string; publicKey: string }> {
    for (let attempt = 0; attempt < TOGGLE_ATTEMPTS; attempt += 1) {
      const current = await this.requireApp(appId);
      const publicKey = generatePublicKey();
      const updated = await this.apps
        .findOneAndUpdate(
          { id: appId, publicKey: current.publicKey },
          {
            $set: { publicKey },
            $push: { retiredPublicKeys: { $each: [current.publicKey], $slice: -RETIRED_KEYS_KEPT } },
          },
          { returnDocument: 'after' },
        )
        .lean<App>()
        .exec();
      if (updated) {
        await this.changes.announce('apps');
        return { id: updated.id, publicKey: updated.publicKey };
      }
    }
    throw new ConflictException('The app key is being rotated by another request; try again');
  }

  /** Inverts `active` with a conditional write, so two concurrent toggles never both read the same state. */
  async toggle(appId: string): Promise<App> {
    for (let attempt = 0; attempt < TOGGLE_ATTEMPTS; attempt += 1) {
      const current = await this.requireApp(appId);
      const updated = await this.apps
        .findOneAndUpdate(
          { id: appId, active: current.active },
          { $set: { active: !current.active } },
          { returnDocument: 'after' },
        )
        .lean<App>()
        .exec();
      if (updated) {
        await this.changes.announce('apps');
        return updated;
      }
    }
    throw new ConflictException(APP_CHANGED_CONCURRENTLY);
  }
}
