import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { ContactsModule } from '../contacts/contacts.module';
import { Contact, ContactSchema } from '../contacts/schemas/contact.schema';
import { NewsletterPublicController } from './newsletter-public.controller';
import { SubscriberImport } from './subscriber-import';
import { SubscribersController } from './subscribers.controller';
import { SubscribersService } from './subscribers.service';
import { NewsletterTemplatesModule } from './templates/newsletter-templates.module';

/**
 * The per-app newsletter (docs/architecture.md "People"): subscribers are a view of the person record (the
 * `contacts` collection, read here for lists and statistics; changed through `ContactsService`, the import
 * excepted), and the newsletter templates (their own module, which the campaigns import).
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: Contact.name, schema: ContactSchema }]),
    ContactsModule,
    AppsModule,
    NewsletterTemplatesModule,
  ],
  controllers: [NewsletterPublicController, SubscribersController],
  providers: [SubscribersService, SubscriberImport],
})
export class NewsletterModule {}
