import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth } from '../common/auth/api-key-auth.decorator';
import { ok, page } from '../common/http/envelope';
import { ApiErrors, ApiOkEnvelope, ApiPageEnvelope } from '../common/swagger/envelope.decorators';
import { CreateWantDto, ListWantsQuery, toWantPublicView, VoteResult, WantPublicView } from './dto/want.dto';
import { Voter } from './voter';
import { WantsService } from './wants.service';

/**
 * The feature-request board as a client app's backend sees it (secret API key of that app), optionally on
 * behalf of an end user signed in by magic link (their token as `Authorization: Bearer`), who is then the
 * voter.
 */
@ApiTags('Wants')
@ApiHeader({
  name: 'X-User-Id',
  required: false,
  description:
    'The end user as the app names them; the voter when no end-user token is sent (else the client IP)',
})
@Controller(':appId/wants')
@ApiKeyAuth({ endUser: 'optional' })
export class WantsPublicController {
  constructor(private readonly wants: WantsService) {}

  @Get()
  @ApiOperation({ operationId: 'listWants', summary: 'List wants with hasVoted for the calling end user' })
  @ApiPageEnvelope(WantPublicView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Param('appId') appId: string, @Query() query: ListWantsQuery, @Voter() voterId: string) {
    const { items, pagination } = await this.wants.listForVoter(appId, query, voterId);
    return page(
      items.map(({ want, hasVoted }) => toWantPublicView(want, hasVoted)),
      pagination,
    );
  }

  @Post()
  @ApiOperation({ operationId: 'createWant', summary: 'Submit a want (status open)' })
  @ApiOkEnvelope(WantPublicView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async create(@Param('appId') appId: string, @Body() dto: CreateWantDto) {
    return ok(toWantPublicView(await this.wants.create(appId, dto), false));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWant', summary: 'Get a want' })
  @ApiOkEnvelope(WantPublicView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('id') id: string, @Voter() voterId: string) {
    const { want, hasVoted } = await this.wants.getForVoter(appId, id, voterId);
    return ok(toWantPublicView(want, hasVoted));
  }

  @Post(':id/vote')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ operationId: 'voteWant', summary: 'Vote for a want, or take the vote back (toggle)' })
  @ApiOkEnvelope(VoteResult)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async vote(@Param('appId') appId: string, @Param('id') id: string, @Voter() voterId: string) {
    return ok(await this.wants.toggleVote(appId, id, voterId));
  }
}
