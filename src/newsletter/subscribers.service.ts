import { personSearch } from '../contacts/person-search';
import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type QueryFilter, trusted } from 'mongoose';
import { AppsService } from '../apps/apps.service';
import { findByIdOr404 } from '../common/database/object-id';
import type { Pagination } from '../common/http/envelope';
import { countsByKey, type GroupCount } from '../common/stats/count-by';
import { findPage } from '../common/pagination/pagination';
import { type ContactChange, subscriptionOf, withSubscription } from '../contacts/contact-ledger';
import { ContactsService } from '../contacts/contacts.service';
import { Contact } from '../contacts/schemas/contact.schema';
import { PublicSignups } from '../contacts/signup/public-signups.service';
import type {
  CreateSubscriberDto,
  ListSubscribersQuery,
  SubscribeDto,
  SubscriberStats,
} from './dto/subscriber.dto';

export const SUBSCRIBER_NOT_FOUND = 'Subscriber not found';

/** `source` of subscriptions and ledger events, by the route that made them. */
export const SubscriptionSources = { api: 'api', admin: 'admin', import: 'import' } as const;

/** The 409 of adding a current subscriber again. */
export const ALREADY_SUBSCRIBED = 'Already subscribed to this app';

/**
 * Newsletter subscribers: a view of the person record (docs/architecture.md "People"). A subscriber is a
 * person with a subscription to the app; their `_id` is the contact's. Every change goes through
 * `ContactsService` (revision-checked, ledger appended), except the import's single bulk write
 * (`SubscriberImport`).
 */
@Injectable()
export class SubscribersService {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly people: ContactsService,
    private readonly apps: AppsService,
    private readonly signups: PublicSignups,
  ) {}

  /**
   * The person's signup through the app's backend: `blog` consent and an active subscription with source
   * `api` (a ledger event each time consent is given), held for e-mail confirmation like a joinlist signup
   * when the person had said no or the app asks everyone to confirm (`PublicSignups`).
   */
  async subscribe(appId: string, dto: SubscribeDto, ip: string): Promise<void> {
    await this.signups.signUp(await this.apps.requireApp(appId), {
      appId,
      email: dto.email,
      firstName: dto.firstName,
      locale: dto.locale,
      source: SubscriptionSources.api,
      referralUrl: dto.referralUrl ?? null,
      ip,
    });
  }

  list(appId: string, query: ListSubscribersQuery): Promise<{ items: Contact[]; pagination: Pagination }> {
    const subscription = query.status ? { appId, status: query.status } : { appId };
    const filter: QueryFilter<Contact> = {
      deletedAt: null,
      subscriptions: trusted({ $elemMatch: subscription }),
    };
    if (query.search) Object.assign(filter, personSearch(query.search));
    return findPage(this.contacts, {
      filter,
      sort: { createdAt: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
      projection: { consentHistory: 0 },
    });
  }

  /** Counts of the app's subscriptions by status and by source, in one aggregation. */
  async stats(appId: string): Promise<SubscriberStats> {
    const [result] = await this.contacts
      .aggregate<{ status: GroupCount[]; source: GroupCount[] }>([
        { $match: { 'subscriptions.appId': appId, deletedAt: null } },
        { $unwind: '$subscriptions' },
        { $match: { 'subscriptions.appId': appId } },
        {
          $facet: {
            status: [{ $group: { _id: '$subscriptions.status', count: { $sum: 1 } } }],
            source: [{ $group: { _id: '$subscriptions.source', count: { $sum: 1 } } }],
          },
        },
      ])
      .exec();
    const byStatus = countsByKey(result?.status ?? []);
    return {
      total: Object.values(byStatus).reduce((sum, count) => sum + count, 0),
      active: byStatus.active ?? 0,
      unsubscribed: byStatus.unsubscribed ?? 0,
      bounced: byStatus.bounced ?? 0,
      bySource: countsByKey(result?.source ?? []),
    };
  }

  /**
   * An admin adds someone: an active subscription with source `admin` and no consent event (the person
   * was not asked; campaigns reach them while `blog` is not false). Their own choices stand: someone who
   * left the app's newsletter (or bounced) is not put back (409), nor is a current subscriber added twice.
   * A first name and locale are taken only when the person has none.
   */
  async create(appId: string, dto: CreateSubscriberDto): Promise<Contact> {
    await this.apps.requireApp(appId);
    const { contact, result } = await this.people.changeByEmail(dto.email, (current) => {
      const existing = subscriptionOf(current, appId);
      if (existing) return { change: null, result: existing.status };
      const set: ContactChange['set'] = {
        subscriptions: withSubscription(current.subscriptions, {
          appId,
          status: 'active',
          source: SubscriptionSources.admin,
          referralUrl: null,
          subscribedAt: new Date(),
          unsubscribedAt: null,
        }),
      };
      if (dto.firstName && !current.firstName) set.firstName = dto.firstName;
      if (dto.locale && !current.locale) set.locale = dto.locale;
      return { change: { set }, result: null };
    });
    if (result === 'active') throw new ConflictException(ALREADY_SUBSCRIBED);
    if (result !== null) {
      throw new ConflictException(
        `This person's subscription is ${result}; only they can subscribe again (their own signup)`,
      );
    }
    return contact;
  }

  /** Removes the app's subscription (not the person, nor their consent); 404 when they have none. */
  async remove(appId: string, id: string): Promise<void> {
    const start = await findByIdOr404(id, SUBSCRIBER_NOT_FOUND, (_id) => this.people.findById(_id));
    const { result: removed } = await this.people.change(start, (current) =>
      current.deletedAt || !subscriptionOf(current, appId)
        ? { change: null, result: false }
        : {
            change: { set: { subscriptions: current.subscriptions.filter((s) => s.appId !== appId) } },
            result: true,
          },
    );
    if (!removed) throw new NotFoundException(SUBSCRIBER_NOT_FOUND);
  }
}
