import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { type AuthUser, CurrentUser } from '../common/auth/current-user.decorator';
import { Access } from '../common/auth/roles';
import { done, ok, page } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../common/swagger/envelope.decorators';
import { ContactErasure } from './contact-erasure';
import { ContactsAdminService } from './contacts-admin.service';
import { ContactExport, toContactExport } from './dto/contact-export.dto';
import {
  ConsentChangeDto,
  ContactDetailView,
  ContactView,
  ListContactsQuery,
  OptOutDto,
  toContactDetailView,
  toContactView,
} from './dto/contact.dto';
import { SENDING_TO_PERSON } from '../email/jobs/recipient-jobs.service';
import { CONTACT_BUSY } from './contacts.service';

/**
 * People in the back office (docs/architecture.md "Credentials and roles"): GETs for every role, consent,
 * opt-out and the data export for `user` and `admin`, the GDPR delete for `admin` only.
 */
@ApiTags('Contacts')
@Controller('admin/contacts')
export class ContactsAdminController {
  constructor(
    private readonly contacts: ContactsAdminService,
    private readonly erasure: ContactErasure,
  ) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listContacts',
    summary: 'List people, newest first (search, consent category, tag); erased people are left out',
  })
  @ApiPageEnvelope(ContactView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListContactsQuery) {
    const { items, pagination } = await this.contacts.list(query);
    return page(items.map(toContactView), pagination);
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getContact',
    summary: 'Get a person with the full consent history (an erased one anonymised, with deletedAt)',
  })
  @ApiOkEnvelope(ContactDetailView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('id') id: string) {
    return ok(toContactDetailView(await this.contacts.get(id)));
  }

  @Delete(':id')
  @Authenticated(Access.Admin)
  @ApiOperation({
    operationId: 'deleteContact',
    summary: 'GDPR delete: erase the personal data everywhere, keep an anonymised consent history',
    description:
      'The address stays suppressed (by an HMAC, not in clear). Answers 409 while an e-mail to the ' +
      'person is being handed to the mail server; sending the delete again completes it.',
  })
  @ApiDoneEnvelope('Contact deleted: personal data erased')
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, SENDING_TO_PERSON)
  async remove(@CurrentUser() user: AuthUser, @Param('id') id: string) {
    await this.erasure.erase(id, user.email);
    return done('Contact deleted: personal data erased');
  }

  @Patch(':id/consent')
  @Authenticated(Access.Write)
  @ApiOperation({
    operationId: 'setContactConsent',
    summary: 'Record a consent decision for one category (a new consent history event)',
  })
  @ApiOkEnvelope(ContactDetailView, { message: 'Consent updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, CONTACT_BUSY)
  async setConsent(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() dto: ConsentChangeDto) {
    const contact = await this.contacts.setConsent(id, dto, user.email);
    return ok(toContactDetailView(contact), 'Consent updated');
  }

  @Post(':id/opt-out')
  @HttpCode(HttpStatus.OK)
  @Authenticated(Access.Write)
  @ApiOperation({
    operationId: 'optOutContact',
    summary: 'Global opt-out: every category refused and no more e-mail to the person',
  })
  @ApiOkEnvelope(ContactDetailView, { message: 'Contact opted out of all e-mail' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, CONTACT_BUSY)
  async optOut(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() dto: OptOutDto) {
    const contact = await this.contacts.optOut(id, dto.reason, user.email);
    return ok(toContactDetailView(contact), 'Contact opted out of all e-mail');
  }

  @Get(':id/export')
  @Authenticated(Access.Write)
  @ApiOperation({
    operationId: 'exportContact',
    summary: 'Everything held about a person as JSON (record, consent history, subscriptions, e-mails)',
  })
  @ApiOkEnvelope(ContactExport)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async export(@Param('id') id: string) {
    return ok(toContactExport(await this.contacts.export(id)));
  }
}
