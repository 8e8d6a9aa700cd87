import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { retryTransient } from '../common/database/transient-retry';
import { SuppressionService } from '../email/suppression/suppression.service';
import { anonymised, anonymisedEvent, erasedAddress } from './contact-anonymisation';
import { ConsentArchive } from './consent-archive';
import { ContactEvents, type ContactErasedEvent } from './contact.events';
import { type ChangeOrigin, type ContactChange, consentEvent } from './contact-ledger';
import { allRefused, CONTACT_NOT_FOUND, ContactsAdminService } from './contacts-admin.service';
import { ContactsService } from './contacts.service';
import { CONSENT_CATEGORIES, Contact } from './schemas/contact.schema';

export const GDPR_DELETE_SOURCE = 'contacts.gdpr-delete';
const MAX_ANONYMISE_ATTEMPTS = 10;

/**
 * GDPR delete (docs/architecture.md "GDPR delete"). The steps run in an order that a failure at any point
 * can be retried by sending the delete again, since the record is marked deleted only at the very end;
 * the record carries `erasureStartedAt` meanwhile, so ContactErasureSweep finishes an erasure that nobody
 * sends again (a killed process, a failure the operator did not see). Every step is safe to repeat, and
 * a transient database failure (an election) repeats it at once:
 * 0. the record marked as being erased (by whom, since when);
 * 1. a suppression entry (keyed by an HMAC of the address), so nothing more is sent to it, ever;
 * 2. `contact.erased`, awaited: every module storing the address replaces it (e-mail jobs, tickets,
 *    feedback, wants); a listener that fails fails the delete;
 * 3. consent withdrawn and subscriptions ended through an ordinary change (ledger events with the
 *    admin as actor), then the archived consent history anonymised (ConsentArchive), then the record
 *    anonymised by one dedicated update: the only rewrites of ledger entries the service makes
 *    (`ContactsService.change` can only append). That update also bumps the token version, so every
 *    end-user token of the person is refused from then on.
 */
@Injectable()
export class ContactErasure {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly people: ContactsService,
    private readonly admin: ContactsAdminService,
    private readonly suppression: SuppressionService,
    private readonly events: EventEmitter2,
    private readonly consentArchive: ConsentArchive,
  ) {}

  async erase(id: string, actor: string): Promise<void> {
    const contact = await this.admin.live(id);
    await retryTransient(() =>
      this.contacts
        .updateOne(
          { _id: contact._id, deletedAt: null },
          { $set: { erasureStartedAt: new Date(), erasureActor: actor } },
          { timestamps: false },
        )
        .exec(),
    );
    await retryTransient(() =>
      this.suppression.suppress({ email: contact.email, reason: 'opt_out', source: GDPR_DELETE_SOURCE }),
    );
    // Every listener is safe to run again (it rewrites what still names the address), so all run again
    // when one meets a transient failure.
    await retryTransient(() =>
      this.events.emitAsync(ContactEvents.Erased, {
        contactId: String(contact._id),
        email: contact.email,
        placeholder: erasedAddress(String(contact._id)),
      } satisfies ContactErasedEvent),
    );
    const origin: ChangeOrigin = { source: GDPR_DELETE_SOURCE, actor, reason: 'Personal data erased' };
    const { contact: withdrawn } = await this.people.change(contact, (current) => ({
      change: current.deletedAt ? null : withdrawal(current, origin),
      result: null,
    }));
    await this.anonymise(withdrawn);
  }

  /** Writes the anonymised record over the revision it was computed from, again on a concurrent change. */
  private async anonymise(start: Contact): Promise<void> {
    let current = start;
    for (let attempt = 1; attempt <= MAX_ANONYMISE_ATTEMPTS; attempt++) {
      if (current.deletedAt) throw new NotFoundException(CONTACT_NOT_FOUND);
      // The archived history first: the record is marked deleted last, so a failure here is retried by
      // sending the delete again.
      await this.consentArchive.anonymise(current, anonymisedEvent(current));
      const updated = await this.contacts
        .updateOne(
          { _id: current._id, revision: current.revision, deletedAt: null },
          // The token version goes up with the erasure: the person's end-user tokens end with it.
          {
            $set: anonymised(current, new Date()),
            $unset: { erasureStartedAt: '', erasureActor: '' },
            $inc: { revision: 1, tokenVersion: 1 },
          },
        )
        .exec();
      if (updated.modifiedCount === 1) return;
      const reread = await this.people.findById(String(current._id));
      if (!reread) throw new NotFoundException(CONTACT_NOT_FOUND);
      current = reread;
    }
    throw new ConflictException('The contact is being changed by other requests; try the delete again');
  }
}

/**
 * Consent ends with the person's data: every category not already refused becomes false with a ledger
 * event, and active subscriptions end, so no audience (campaigns, newsletters) can select the erased record.
 */
function withdrawal(current: Contact, origin: ChangeOrigin): ContactChange | null {
  const events = CONSENT_CATEGORIES.filter((category) => current.consent[category] !== false).map(
    (category) => consentEvent(category, false, origin),
  );
  const now = new Date();
  const active = current.subscriptions.some((subscription) => subscription.status === 'active');
  if (events.length === 0 && !active) return null;
  return {
    set: {
      consent: allRefused(),
      subscriptions: current.subscriptions.map((subscription) =>
        subscription.status === 'active'
          ? { ...subscription, status: 'unsubscribed', unsubscribedAt: now }
          : subscription,
      ),
    },
    events,
  };
}
