import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { App, AppSchema } from '../apps/schemas/app.schema';
import { AdminSenderDomainsController } from './admin-sender-domains.controller';
import { LinkDomains } from './link-domains';
import { SenderDomain, SenderDomainSchema } from './schemas/sender-domain.schema';
import { SenderDomainRecheck } from './sender-domain-recheck';
import { SenderDomainsService } from './sender-domains.service';
import { SendingIdentities } from './sending-identities';

/**
 * Sender domains and who each app's mail is from. Others use `SendingIdentities` (the e-mail worker, the
 * app and template checks), `LinkDomains` (where an app's links point, and which host answers them) and
 * `SenderDomainsService.recheckOldest` (the worker's periodic re-check). It reads app records itself, so
 * the apps module can import it without a cycle.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: SenderDomain.name, schema: SenderDomainSchema },
      { name: App.name, schema: AppSchema },
    ]),
  ],
  controllers: [AdminSenderDomainsController],
  providers: [SenderDomainsService, SendingIdentities, SenderDomainRecheck, LinkDomains],
  exports: [SenderDomainsService, SendingIdentities, LinkDomains],
})
export class SenderDomainsModule {}
