import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DirectRoute, DirectRoutes } from '../../common/http/direct-routes';
import type { ErrorBody } from '../../common/http/envelope';
import { LINK_NOT_FOUND, LinkDomains } from '../../sender-domains/link-domains';
import { TrackingEvents } from './tracking-events';
import { trackingEvent } from './tracking-hit';
import { TrackingLinks } from './tracking-links';

/** A 1×1 transparent GIF (42 bytes). */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

/**
 * The pixel's headers instead of the API's: an image needs no Content-Security-Policy or frame rules, and
 * helmet's `Cross-Origin-Resource-Policy: same-origin` would stop a browser showing it inside a webmail
 * page on another origin (the open would never be seen). `no-store`: each open is fetched again.
 */
const PIXEL_HEADERS = {
  'content-type': 'image/gif',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'cross-origin',
};

const OPEN_PIXEL_DOC: DirectRoute['openApi'] = {
  operationId: 'trackOpen',
  summary: 'Open pixel: a 1×1 GIF, records an opened event',
  description:
    'Always the same GIF with `Cache-Control: no-store`, whatever the token: nothing tells a valid token ' +
    "from an invalid one (on an app's link domain, a token not of that app is a 404). A genuine token " +
    'records an `opened` event (buffered, written within a second), ' +
    "except a repeat within a minute or beyond the message's 50th open. HEAD records nothing.",
  tags: ['Tracking'],
  parameters: [
    {
      name: 'token',
      in: 'path',
      required: true,
      description: 'Signed open token, optionally followed by `.gif`',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': {
      description: 'A 1×1 transparent GIF, whatever the token',
      content: { 'image/gif': { schema: { type: 'string', format: 'binary' } } },
    },
    '404': {
      description: "Only on an app's link domain: a token that is not that app's (forged or another app's)",
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorSchema' } } },
    },
  },
};

/**
 * `GET /o/{token}` (docs/architecture.md "Tracking"): fetched once per opened campaign mail, often in bursts
 * by mail-privacy proxies, so Fastify answers it directly (DirectRoutes): no guard (it is public), no pipe
 * (its one parameter is checked by the token's signature), no throttle (a proxy fetches for many readers from
 * one address). What a flood can cost is bounded by the event buffer's cap, and a replayed token by the
 * replay window and its message's cap (TrackingEvents). The event is buffered, never awaited.
 */
@Injectable()
export class OpenPixelRoute {
  constructor(
    directRoutes: DirectRoutes,
    private readonly links: TrackingLinks,
    private readonly events: TrackingEvents,
    private readonly linkDomains: LinkDomains,
  ) {
    directRoutes.add({
      url: '/o/:token',
      openApiPath: '/o/{token}',
      openApi: OPEN_PIXEL_DOC,
      // A failed link-host read is answered by Fastify's error handler (the envelope), never left unhandled.
      handler: (request, reply) => void this.answer(request, reply).catch((error) => reply.send(error)),
    });
  }

  private async answer(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // On an app's link domain only that app's tokens are answered; anywhere else every token gets the GIF.
    if (this.linkDomains.mayBeLinkHost(request.hostname)) {
      const { token } = request.params as { token: string };
      if (await this.linkDomains.refuses(request.hostname, this.links.readOpen(token)?.appId)) {
        const body: ErrorBody = { success: false, error: LINK_NOT_FOUND };
        return void reply.status(404).send(body);
      }
    }
    // A HEAD request (a link checker) shows no image: it is answered, not counted.
    if (request.method === 'GET') this.recordOpen(request);
    void reply.headers(PIXEL_HEADERS).send(TRANSPARENT_GIF);
  }

  private recordOpen(request: FastifyRequest): void {
    const { token } = request.params as { token: string };
    const userAgent = request.headers['user-agent'];
    const at = new Date();
    this.events.recordLater(() => {
      const target = this.links.readOpen(token);
      // A test copy's pixel is answered like any, never counted.
      return target && !target.test ? trackingEvent(target, 'opened', userAgent, at) : null;
    });
  }
}
