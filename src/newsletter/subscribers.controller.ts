import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { AcceptsBody, MAX_BODY_BYTES } from '../common/http/body/body-policy';
import { done, ok, page } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../common/swagger/envelope.decorators';
import {
  CreateSubscriberDto,
  IMPORT_MAX,
  ImportResult,
  ImportSubscribersDto,
  ListSubscribersQuery,
  SubscriberStats,
  SubscriberView,
  toSubscriberView,
} from './dto/subscriber.dto';
import { SubscriberImport } from './subscriber-import';
import { ALREADY_SUBSCRIBED, SubscribersService } from './subscribers.service';
import { ApiUnknownApp, KnownApp } from '../apps/known-app.pipe';

/**
 * An import body: 10,000 entries of `{email, firstName, locale}` (three fields and the entry itself each)
 * and the `subscribers` array. 1 MiB, the ceiling of every route, leaves about 100 bytes per entry at the
 * full 10,000 (`{"email":"firstname.lastname@example.com","firstName":"Firstname","locale":"en"}` is 75).
 */
const IMPORT_BODY = { maxBytes: MAX_BODY_BYTES, maxFields: IMPORT_MAX * 4 + 1 };

/**
 * One app's newsletter subscribers in the back office (GETs for every role, writes for `user` and `admin`).
 */
@ApiTags('Newsletter')
@Controller('admin/:appId/newsletter/subscribers')
@Authenticated(Access.Write)
export class SubscribersController {
  constructor(
    private readonly subscribers: SubscribersService,
    private readonly importer: SubscriberImport,
  ) {}

  @Get('stats')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getSubscriberStats',
    summary: "Counts of the app's subscriptions by status and by source",
  })
  @ApiOkEnvelope(SubscriberStats)
  @ApiUnknownApp()
  async stats(@Param('appId', KnownApp) appId: string) {
    return ok(await this.subscribers.stats(appId));
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listSubscribers',
    summary: 'People with a subscription to the app, newest first (status of that subscription, search)',
  })
  @ApiPageEnvelope(SubscriberView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async list(@Param('appId', KnownApp) appId: string, @Query() query: ListSubscribersQuery) {
    const { items, pagination } = await this.subscribers.list(appId, query);
    return page(
      items.map((contact) => toSubscriberView(contact, appId)),
      pagination,
    );
  }

  @Post()
  @ApiOperation({
    operationId: 'createSubscriber',
    summary: 'Add a person to the newsletter (source `admin`; no consent is recorded for them)',
  })
  @ApiOkEnvelope(SubscriberView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, ALREADY_SUBSCRIBED)
  async create(@Param('appId') appId: string, @Body() dto: CreateSubscriberDto) {
    return ok(toSubscriberView(await this.subscribers.create(appId, dto), appId));
  }

  @Post('import')
  @HttpCode(HttpStatus.OK)
  @AcceptsBody(IMPORT_BODY)
  @ApiOperation({
    operationId: 'importSubscribers',
    summary: `Import up to ${IMPORT_MAX} subscribers (source \`import\`); invalid, repeated and existing ones are skipped`,
    description:
      'Adds an active subscription for each new address, and for each known person without one for this ' +
      'app. A person who already has one (even unsubscribed) is left as they are; consent is never changed.',
  })
  @ApiOkEnvelope(ImportResult)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.PAYLOAD_TOO_LARGE)
  async import(@Param('appId') appId: string, @Body() dto: ImportSubscribersDto) {
    return ok(await this.importer.import(appId, dto.subscribers));
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteSubscriber',
    summary: "Remove the person's subscription to the app (the person and their consent stay)",
  })
  @ApiDoneEnvelope('Subscriber removed from the newsletter')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.subscribers.remove(appId, id);
    return done('Subscriber removed from the newsletter');
  }
}
