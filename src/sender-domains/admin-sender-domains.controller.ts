import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { done, ok } from '../common/http/envelope';
import { duplicateRecordMessage } from '../common/http/all-exceptions.filter';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
} from '../common/swagger/envelope.decorators';
import { CreateSenderDomainDto, SenderDomainView, toSenderDomainView } from './dto/sender-domain.dto';
import { LinkDomains } from './link-domains';
import { SendingIdentities } from './sending-identities';
import { SenderDomainsService } from './sender-domains.service';

/** Sender domains (docs/operations/sending-domains.md): admins only, like the app records they serve. */
@ApiTags('Sender domains')
@Controller('admin/sender-domains')
@Authenticated(Access.Admin)
export class AdminSenderDomainsController {
  constructor(
    private readonly domains: SenderDomainsService,
    private readonly identities: SendingIdentities,
    private readonly linkDomains: LinkDomains,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'createSenderDomain',
    summary:
      'Add a sender domain of an app: the service makes its DKIM key and answers the records to publish',
  })
  @ApiOkEnvelope(SenderDomainView, { status: HttpStatus.CREATED, message: 'Sender domain created' })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiErrorMessage(HttpStatus.CONFLICT, duplicateRecordMessage(['domain']))
  async create(@Body() dto: CreateSenderDomainDto) {
    const created = await this.domains.create(dto.domain, dto.appId);
    return ok(toSenderDomainView(created, this.domains.recordsOf(created)), 'Sender domain created');
  }

  @Get()
  @ApiOperation({
    operationId: 'listSenderDomains',
    summary: 'List sender domains (by name) with their state',
  })
  @ApiOkEnvelope(SenderDomainView, { isArray: true })
  async list() {
    const all = await this.domains.list();
    return ok(all.map((domain) => toSenderDomainView(domain, this.domains.recordsOf(domain))));
  }

  @Post(':id/verify')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'verifySenderDomain',
    summary: 'Look the records up in DNS and answer the state of each',
  })
  @ApiOkEnvelope(SenderDomainView, { message: 'Sender domain checked' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async verify(@Param('id') id: string) {
    const checked = await this.domains.verify(id);
    this.identities.forget(checked.appId);
    this.linkDomains.forget();
    return ok(toSenderDomainView(checked, checked.records), 'Sender domain checked');
  }

  @Post(':id/rotate-key')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'rotateSenderDomainKey',
    summary:
      'Make a new DKIM key with a new selector; it signs once its record verifies, the old record stays ' +
      'listed until DKIM_KEY_OVERLAP_DAYS after that',
  })
  @ApiOkEnvelope(SenderDomainView, { message: 'DKIM key rotation started' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async rotateKey(@Param('id') id: string) {
    const rotated = await this.domains.rotateKey(id);
    return ok(toSenderDomainView(rotated, this.domains.recordsOf(rotated)), 'DKIM key rotation started');
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteSenderDomain',
    summary: 'Remove a sender domain: its app sends from MAIL_FROM (or another domain) from then on',
  })
  @ApiDoneEnvelope('Sender domain deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('id') id: string) {
    const appId = await this.domains.remove(id);
    this.identities.forget(appId);
    this.linkDomains.forget();
    return done('Sender domain deleted');
  }
}
