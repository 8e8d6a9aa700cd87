import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../../apps/apps.module';
import { SenderDomainsModule } from '../../sender-domains/sender-domains.module';
import { EmailTemplatesController } from './email-templates.controller';
import { EmailTemplatesService } from './email-templates.service';
import { EmailTemplate, EmailTemplateSchema } from './schemas/email-template.schema';

/** E-mail templates: the admin routes, and `EmailTemplatesService` for the modules that send e-mail. */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: EmailTemplate.name, schema: EmailTemplateSchema }]),
    AppsModule,
    SenderDomainsModule,
  ],
  controllers: [EmailTemplatesController],
  providers: [EmailTemplatesService],
  exports: [EmailTemplatesService],
})
export class EmailTemplatesModule {}
