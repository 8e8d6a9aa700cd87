import { Controller, Get, Headers, HttpStatus, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../../common/auth/public.decorator';
import { ApiErrors } from '../../common/swagger/envelope.decorators';
import { LINK_NOT_FOUND, LinkDomains } from '../../sender-domains/link-domains';
import { ClickTargets } from './click-targets';
import { TrackingLinks } from './tracking-links';
import { trackingEvent } from './tracking-hit';
import { TrackingEvents } from './tracking-events';

/**
 * The click redirects of campaign mail (docs/architecture.md "Tracking"): 302 only to the URL stored in the
 * campaign's link table for a genuine token, 404 otherwise (no open redirect), and on an app's link domain
 * for that app's tokens only (LinkDomains). Events are buffered. The open
 * pixel is answered by Fastify directly (open-pixel.route.ts). HEAD (which Fastify answers with this GET
 * handler) gets the same redirect but is no click: link checkers and previews send it, a person following a
 * link does not.
 */
@ApiTags('Tracking')
@Controller()
@Public()
export class TrackingController {
  constructor(
    private readonly links: TrackingLinks,
    private readonly targets: ClickTargets,
    private readonly events: TrackingEvents,
    private readonly linkDomains: LinkDomains,
  ) {}

  @Get('c/:token')
  @ApiOperation({
    operationId: 'trackClick',
    summary: 'Click redirect: 302 to the link stored with the campaign',
  })
  @ApiParam({ name: 'token', description: 'Signed click token' })
  @ApiResponse({
    status: HttpStatus.FOUND,
    description:
      'Redirect to the stored URL (Location header). A GET records a `clicked` event, except a repeat of ' +
      "the same link within a minute or beyond the message's 50th click; HEAD records nothing.",
  })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async click(
    @Param('token') token: string,
    @Headers('user-agent') userAgent: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const target = this.links.readClick(token);
    await this.linkDomains.assertAnswers(reply.request.hostname, target?.appId);
    const url = target ? await this.targets.urlOf(target.campaignId, target.linkIndex, target.test) : null;
    if (!target || !url) throw new NotFoundException(LINK_NOT_FOUND);
    // A test copy's click goes where the real one would, uncounted.
    if (reply.request.method === 'GET' && !target.test) {
      this.events.record(
        trackingEvent(target, 'clicked', userAgent, new Date(), { linkIndex: target.linkIndex, url }),
      );
    }
    return reply.status(HttpStatus.FOUND).header('cache-control', 'no-store').redirect(url);
  }
}
