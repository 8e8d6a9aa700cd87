import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../../apps/apps.module';
import { NewsletterTemplatesController } from './newsletter-templates.controller';
import { NewsletterTemplatesService } from './newsletter-templates.service';
import { NewsletterTemplate, NewsletterTemplateSchema } from './schemas/newsletter-template.schema';

/** Newsletter templates of each app; campaigns read them through `NewsletterTemplatesService.findForApp`. */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: NewsletterTemplate.name, schema: NewsletterTemplateSchema }]),
    AppsModule,
  ],
  controllers: [NewsletterTemplatesController],
  providers: [NewsletterTemplatesService],
  exports: [NewsletterTemplatesService],
})
export class NewsletterTemplatesModule {}
