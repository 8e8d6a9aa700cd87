import { Body, Controller, Delete, Get, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { type AuthUser, CurrentUser } from '../../common/auth/current-user.decorator';
import { Access } from '../../common/auth/roles';
import { done, ok, page } from '../../common/http/envelope';
import { PaginationQueryDto } from '../../common/pagination/pagination';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../../common/swagger/envelope.decorators';
import { NothingToUpdatePipe } from '../../common/validation/nothing-to-update.pipe';
import {
  CreateSegmentDto,
  SegmentPreviewQuery,
  SegmentPreviewView,
  SegmentView,
  toSegmentView,
  UpdateSegmentDto,
} from './dto/segment.dto';
import { PREVIEW_READ_MAX, SEGMENT_IN_USE, SegmentsService } from './segments.service';

@ApiTags('Newsletter')
@Controller('admin/:appId/segments')
@Authenticated(Access.Write)
export class SegmentsController {
  constructor(private readonly segments: SegmentsService) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listSegments', summary: 'List the app’s segments, newest first' })
  @ApiPageEnvelope(SegmentView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async list(@Param('appId') appId: string, @Query() query: PaginationQueryDto) {
    const { items, pagination } = await this.segments.list(appId, query);
    return page(items.map(toSegmentView), pagination);
  }

  @Post()
  @ApiOperation({ operationId: 'createSegment', summary: 'Save a named audience filter' })
  @ApiOkEnvelope(SegmentView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async create(@Param('appId') appId: string, @Body() dto: CreateSegmentDto, @CurrentUser() user: AuthUser) {
    return ok(toSegmentView(await this.segments.create(appId, dto, user.id)));
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getSegment', summary: 'Get one segment' })
  @ApiOkEnvelope(SegmentView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(toSegmentView(await this.segments.get(appId, id)));
  }

  @Get(':id/preview')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'previewSegment',
    summary: 'Count a segment’s members and list the first ones',
    description:
      `Counts up to 10,000 members, reading at most ${PREVIEW_READ_MAX.toLocaleString('en')} subscribers ` +
      '(`countCapped` says when it stopped); `limit` members are listed in id order.',
  })
  @ApiOkEnvelope(SegmentPreviewView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async preview(@Param('appId') appId: string, @Param('id') id: string, @Query() query: SegmentPreviewQuery) {
    return ok(await this.segments.preview(appId, id, query.limit));
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'updateSegment', summary: 'Rename a segment or replace its filter' })
  @ApiOkEnvelope(SegmentView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateSegmentDto,
  ) {
    return ok(toSegmentView(await this.segments.update(appId, id, dto)));
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteSegment',
    summary: 'Delete a segment (409 while a draft or scheduled campaign targets it)',
  })
  @ApiDoneEnvelope('Segment deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, SEGMENT_IN_USE)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.segments.remove(appId, id);
    return done('Segment deleted');
  }
}
