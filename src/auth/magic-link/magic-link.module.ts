import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../../apps/apps.module';
import { ContactsModule } from '../../contacts/contacts.module';
import { EmailModule } from '../../email/email.module';
import { AuthModule } from '../auth.module';
import { MagicLinkAddressLimit } from './address-limit';
import { MagicLinkComposer } from './magic-link-composer';
import { MagicLinkController } from './magic-link.controller';
import { MagicLinkService } from './magic-link.service';
import { MagicLinkTokens } from './magic-link-tokens';
import { MagicLinkToken, MagicLinkTokenSchema } from './schemas/magic-link-token.schema';

/**
 * Passwordless sign-in of apps' end users (docs/architecture.md "Magic link"): send a link, verify its token.
 * The end-user token it returns is signed by AuthModule's EndUserTokenService and checked by the `end-user`
 * strategy registered there. `MagicLinkComposer` renders the sign-in mail when the worker sends it.
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: MagicLinkToken.name, schema: MagicLinkTokenSchema }]),
    AppsModule,
    AuthModule,
    ContactsModule,
    EmailModule,
  ],
  controllers: [MagicLinkController],
  providers: [MagicLinkService, MagicLinkTokens, MagicLinkAddressLimit, MagicLinkComposer],
})
export class MagicLinkModule {}
