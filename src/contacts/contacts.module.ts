import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EmailModule } from '../email/email.module';
import { ContactErasure } from './contact-erasure';
import { ContactsAdminController } from './contacts-admin.controller';
import { ContactsAdminService } from './contacts-admin.service';
import { ContactsService } from './contacts.service';
import { JoinlistController } from './joinlist/joinlist.controller';
import { JoinlistService } from './joinlist/joinlist.service';
import { Contact, ContactSchema } from './schemas/contact.schema';
import { UnsubscribeController } from './unsubscribe/unsubscribe.controller';
import { UnsubscribeLinks } from './unsubscribe/unsubscribe-links';

/**
 * People and consent (DESIGN "People"): the person record and its ledger, the admin contacts routes, GDPR
 * tools, the joinlist and the unsubscribe page: everything that changes a person.
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: Contact.name, schema: ContactSchema }]), EmailModule],
  controllers: [ContactsAdminController, JoinlistController, UnsubscribeController],
  providers: [ContactsService, ContactsAdminService, ContactErasure, JoinlistService, UnsubscribeLinks],
  exports: [ContactsService, UnsubscribeLinks],
})
export class ContactsModule {}
