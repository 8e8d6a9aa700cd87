import { personSearch } from './person-search';
import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type QueryFilter } from 'mongoose';
import { findByIdOr404 } from '../common/database/object-id';
import type { Pagination } from '../common/http/envelope';
import { findPage } from '../common/pagination/pagination';
import { RecipientJobsService } from '../email/jobs/recipient-jobs.service';
import { ContactEmailEvents } from '../email/tracking/contact-email-events';
import { SuppressionService } from '../email/suppression/suppression.service';
import { type ChangeOrigin, consentEvent, withConsent } from './contact-ledger';
import { ConsentArchive } from './consent-archive';
import { ContactsService } from './contacts.service';
import type { ConsentChangeDto, ListContactsQuery } from './dto/contact.dto';
import type { ContactExportData } from './dto/contact-export.dto';
import { CONSENT_CATEGORIES, type Consent, Contact } from './schemas/contact.schema';

export const CONTACT_NOT_FOUND = 'Contact not found';

/** Where the back office's changes are recorded in the ledger (`source` of their events). */
export const ADMIN_SOURCE = 'admin';
export const OPT_OUT_SOURCE = 'contacts.opt-out';

/**
 * The back office's view of people (`/admin/contacts`): lists, one person with their consent history,
 * consent changes and the global opt-out (through `ContactsService.change`, so every change is a ledger
 * event), and the data export. An erased person is listed nowhere and can no longer be changed or exported;
 * reading them by id shows the anonymised record.
 */
@Injectable()
export class ContactsAdminService {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly people: ContactsService,
    private readonly suppression: SuppressionService,
    private readonly recipientJobs: RecipientJobsService,
    private readonly emailEvents: ContactEmailEvents,
    private readonly consentArchive: ConsentArchive,
  ) {}

  list(query: ListContactsQuery): Promise<{ items: Contact[]; pagination: Pagination }> {
    const filter: QueryFilter<Contact> = { deletedAt: null };
    if (query.category) filter[`consent.${query.category}`] = query.categoryStatus ?? true;
    if (query.tag !== undefined) filter.tags = query.tag;
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

  /** Any record, erased ones included (anonymised, with `deletedAt`). */
  get(id: string): Promise<Contact> {
    return findByIdOr404(id, CONTACT_NOT_FOUND, (_id) => this.people.findById(_id));
  }

  /** A person who has not been erased, or 404. */
  live(id: string): Promise<Contact> {
    return findByIdOr404(id, CONTACT_NOT_FOUND, async (_id) => {
      const contact = await this.people.findById(_id);
      return contact && !contact.deletedAt ? contact : null;
    });
  }

  /**
   * Records a consent decision made through the back office (one ledger event, even when the value does
   * not change: the event records the decision and who took it). Consent given again lifts an opt-out
   * suppression, never a bounce or complaint one.
   */
  async setConsent(id: string, dto: ConsentChangeDto, actor: string): Promise<Contact> {
    const origin: ChangeOrigin = { source: ADMIN_SOURCE, actor, reason: dto.reason };
    const { contact, result: changed } = await this.people.change(await this.live(id), (current) =>
      current.deletedAt
        ? { change: null, result: false }
        : {
            change: {
              set: { consent: withConsent(current.consent, dto.category, dto.status) },
              events: [consentEvent(dto.category, dto.status, origin)],
            },
            result: true,
          },
    );
    if (!changed) throw new NotFoundException(CONTACT_NOT_FOUND);
    if (dto.status) await this.suppression.liftOptOut(contact.email);
    return contact;
  }

  /**
   * The global opt-out: a suppression entry first (the worker checks it before every send, so mail
   * already queued stops too), then every category false with one ledger event each.
   */
  async optOut(id: string, reason: string | undefined, actor: string): Promise<Contact> {
    const start = await this.live(id);
    await this.suppression.suppress({ email: start.email, reason: 'opt_out', source: OPT_OUT_SOURCE });
    const origin: ChangeOrigin = {
      source: OPT_OUT_SOURCE,
      actor,
      reason: reason ?? 'Opted out of all e-mail',
    };
    const { contact, result: changed } = await this.people.change(start, (current) =>
      current.deletedAt
        ? { change: null, result: false }
        : {
            change: {
              set: { consent: allRefused() },
              events: CONSENT_CATEGORIES.map((category) => consentEvent(category, false, origin)),
            },
            result: true,
          },
    );
    if (!changed) throw new NotFoundException(CONTACT_NOT_FOUND);
    return contact;
  }

  /**
   * Everything held about a person: the record with its whole consent history (archived events included)
   * and subscriptions, and the
   * e-mails addressed to them (what and when, not the bodies) and the e-mail events recorded for them.
   */
  async export(id: string): Promise<ContactExportData> {
    const contact = await this.live(id);
    const [consentHistory, emails, events] = await Promise.all([
      this.consentArchive.history(contact),
      this.recipientJobs.addressedTo(contact.email),
      this.emailEvents.forContact(String(contact._id)),
    ]);
    return { contact: { ...contact, consentHistory }, emails, events };
  }
}

export const allRefused = (): Consent => ({ outreach: false, commercial: false, blog: false });
