import { Controller, Get, Headers, HttpStatus, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../../common/auth/public.decorator';
import { ApiErrors } from '../../common/swagger/envelope.decorators';
import { looksAutomated, USER_AGENT_MAX } from './automated';
import { ClickTargets } from './click-targets';
import { campaignMessageId, TrackingLinks, type OpenTarget } from './tracking-links';
import { TrackingEvents } from './tracking-events';

/** A 1×1 transparent GIF (43 bytes). */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

/**
 * The open pixel and click redirects of campaign mail (DESIGN "Tracking"). The pixel always answers the
 * same GIF (nothing tells a valid token from an invalid one); a click answers 302 only to the URL stored
 * in the campaign's link table for a genuine token, 404 otherwise (no open redirect). Events are buffered.
 */
@ApiTags('Tracking')
@Controller()
@Public()
export class TrackingController {
  constructor(
    private readonly links: TrackingLinks,
    private readonly targets: ClickTargets,
    private readonly events: TrackingEvents,
  ) {}

  @Get('o/:token')
  @ApiOperation({ operationId: 'trackOpen', summary: 'Open pixel: a 1×1 GIF, records an opened event' })
  @ApiParam({ name: 'token', description: 'Signed open token, optionally followed by `.gif`' })
  @ApiProduces('image/gif')
  @ApiOkResponse({
    description: 'A 1×1 transparent GIF, whatever the token',
    content: { 'image/gif': { schema: { type: 'string', format: 'binary' } } },
  })
  open(
    @Param('token') token: string,
    @Headers('user-agent') userAgent: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const target = this.links.readOpen(token);
    if (target) this.record(target, 'opened', userAgent);
    return reply
      .status(HttpStatus.OK)
      .header('content-type', 'image/gif')
      .header('cache-control', 'no-store')
      .send(TRANSPARENT_GIF);
  }

  @Get('c/:token')
  @ApiOperation({
    operationId: 'trackClick',
    summary: 'Click redirect: 302 to the link stored with the campaign',
  })
  @ApiParam({ name: 'token', description: 'Signed click token' })
  @ApiResponse({ status: HttpStatus.FOUND, description: 'Redirect to the original URL (Location header)' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async click(
    @Param('token') token: string,
    @Headers('user-agent') userAgent: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const target = this.links.readClick(token);
    const url = target ? await this.targets.urlOf(target.campaignId, target.linkIndex) : null;
    if (!target || !url) throw new NotFoundException('Link not found');
    this.record(target, 'clicked', userAgent, { linkIndex: target.linkIndex, url });
    return reply.status(HttpStatus.FOUND).header('cache-control', 'no-store').redirect(url);
  }

  private record(
    target: OpenTarget,
    type: 'opened' | 'clicked',
    userAgent: string | undefined,
    click: { linkIndex?: number; url?: string } = {},
  ): void {
    const agent = typeof userAgent === 'string' ? userAgent.slice(0, USER_AGENT_MAX) : null;
    this.events.record({
      appId: target.appId,
      contactId: target.contactId,
      messageId: campaignMessageId(target.campaignId, target.contactId),
      campaignId: target.campaignId,
      provider: 'tracking',
      type,
      ...click,
      userAgent: agent,
      automated: looksAutomated(agent),
      createdAt: new Date(),
    });
  }
}
