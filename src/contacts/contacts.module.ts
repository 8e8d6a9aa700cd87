import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { EmailModule } from '../email/email.module';
import { SenderDomainsModule } from '../sender-domains/sender-domains.module';
import { ConsentArchive } from './consent-archive';
import { ContactErasure } from './contact-erasure';
import { ContactErasureSweep } from './contact-erasure-sweep';
import { ContactsAdminController } from './contacts-admin.controller';
import { ContactsAdminService } from './contacts-admin.service';
import { ContactsService } from './contacts.service';
import { JoinlistController } from './joinlist/joinlist.controller';
import { JoinlistService } from './joinlist/joinlist.service';
import { ArchivedConsentEvent, ArchivedConsentEventSchema } from './schemas/archived-consent-event.schema';
import { Contact, ContactSchema } from './schemas/contact.schema';
import { PublicSignups } from './signup/public-signups.service';
import { SignupConfirmationComposer } from './signup/signup-confirmation-composer';
import { SignupConfirmationErasureListener } from './signup/signup-confirmation-erasure.listener';
import { SignupConfirmationLinks } from './signup/signup-confirmation-links';
import { SignupConfirmationController } from './signup/signup-confirmation.controller';
import { SignupConfirmation, SignupConfirmationSchema } from './signup/signup-confirmation.schema';
import { UnsubscribeController } from './unsubscribe/unsubscribe.controller';
import { UnsubscribeLinks } from './unsubscribe/unsubscribe-links';
import { NewsletterTopicsController } from './topics/newsletter-topics.controller';
import { NewsletterTopics, NewsletterTopicsSchema } from './topics/newsletter-topics.schema';
import { NewsletterTopicsService } from './topics/newsletter-topics.service';
import { TopicPreferences } from './unsubscribe/topic-preferences';

/**
 * People and consent (docs/architecture.md "People"): the person record and its ledger, the admin contacts
 * routes, GDPR tools, the joinlist with its signup confirmations, newsletter topics, and the unsubscribe and
 * preference page: everything that changes a person.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Contact.name, schema: ContactSchema },
      { name: ArchivedConsentEvent.name, schema: ArchivedConsentEventSchema },
      { name: SignupConfirmation.name, schema: SignupConfirmationSchema },
      { name: NewsletterTopics.name, schema: NewsletterTopicsSchema },
    ]),
    EmailModule,
    AppsModule,
    SenderDomainsModule,
  ],
  controllers: [
    ContactsAdminController,
    JoinlistController,
    NewsletterTopicsController,
    SignupConfirmationController,
    UnsubscribeController,
  ],
  providers: [
    ConsentArchive,
    ContactsService,
    ContactsAdminService,
    ContactErasure,
    ContactErasureSweep,
    JoinlistService,
    NewsletterTopicsService,
    PublicSignups,
    SignupConfirmationComposer,
    SignupConfirmationErasureListener,
    SignupConfirmationLinks,
    TopicPreferences,
    UnsubscribeLinks,
  ],
  exports: [ContactsService, NewsletterTopicsService, PublicSignups, UnsubscribeLinks],
})
export class ContactsModule {}
