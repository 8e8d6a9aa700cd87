import { Body, Controller, Get, HttpStatus, Param, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { Access } from '../../common/auth/roles';
import { ok } from '../../common/http/envelope';
import { ApiErrors, ApiOkEnvelope } from '../../common/swagger/envelope.decorators';
import { NewsletterTopicsView, PutNewsletterTopicsDto } from './dto/newsletter-topics.dto';
import { NewsletterTopicsService } from './newsletter-topics.service';

@ApiTags('Newsletter')
@Controller('admin/:appId/newsletter/topics')
@Authenticated(Access.Write)
export class NewsletterTopicsController {
  constructor(private readonly topics: NewsletterTopicsService) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listNewsletterTopics', summary: 'The app’s newsletter topics' })
  @ApiOkEnvelope(NewsletterTopicsView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async list(@Param('appId') appId: string) {
    return ok({ topics: await this.topics.listForApp(appId) });
  }

  @Put()
  @ApiOperation({
    operationId: 'putNewsletterTopics',
    summary: 'Replace the app’s newsletter topics (what campaigns name and the preference page lists)',
  })
  @ApiOkEnvelope(NewsletterTopicsView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async replace(@Param('appId') appId: string, @Body() dto: PutNewsletterTopicsDto) {
    return ok({ topics: await this.topics.replace(appId, dto.topics) });
  }
}
