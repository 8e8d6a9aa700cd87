import { Controller, Get, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../common/auth/public.decorator';
import { AcceptsBody } from '../../common/http/body/body-policy';
import { clientIp } from '../../common/http/client-ip';
import { ContactsService } from '../contacts.service';
import { CONFIRM_PAGE, DONE_PAGE, sendPage } from './unsubscribe-page';
import { UnsubscribeLinks } from './unsubscribe-links';

const HTML_PAGE = {
  description: 'An HTML page, the same for valid and invalid tokens',
  content: { 'text/html': { schema: { type: 'string' } } },
};
/** An unsubscribe POST's whole body: room for `List-Unsubscribe=One-Click` and a little more. */
const FORM_BYTES = 1024;
const FORM_FIELDS = 10;
const TOKEN_PARAM = {
  name: 'token',
  // Typed on GET too, where no handler argument gives Swagger the type (generated clients need one).
  type: String,
  description: 'Signed unsubscribe token from an e-mail or a joinlist answer',
};

/**
 * The unsubscribe link of every newsletter mail (docs/architecture.md "Unsubscribe"). GET shows a
 * confirmation page; POST unsubscribes at once: the page's button, and the RFC 8058 one-click POST of mailbox
 * providers (`List-Unsubscribe=One-Click`, form-encoded, no credentials). Both answer 200 HTML whatever the
 * token.
 */
@ApiTags('Joinlist')
@Controller('unsubscribe')
@Public()
export class UnsubscribeController {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly contacts: ContactsService,
  ) {}

  @Get(':token')
  @ApiOperation({ operationId: 'unsubscribePage', summary: 'The unsubscribe confirmation page (no change)' })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/html')
  @ApiOkResponse(HTML_PAGE)
  confirm(@Res() reply: FastifyReply) {
    return sendPage(reply, CONFIRM_PAGE);
  }

  @Post(':token')
  @HttpCode(HttpStatus.OK)
  // The button posts an empty form; a one-click POST carries `List-Unsubscribe=One-Click`, form-encoded or
  // multipart (RFC 8058 §3.2 prefers multipart). The content is not needed: the token is the whole request.
  @AcceptsBody({ maxBytes: FORM_BYTES, maxFields: FORM_FIELDS, form: true, multipart: true })
  @ApiOperation({
    operationId: 'unsubscribeByToken',
    summary: 'Unsubscribe at once (the page button and the RFC 8058 one-click target)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/html')
  @ApiOkResponse(HTML_PAGE)
  async unsubscribe(
    @Param('token') token: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await discardMultipart(request);
    const target = this.links.read(token);
    if (target) {
      const origin = { source: 'unsubscribe', actor: 'self', ip: clientIp(request) };
      await this.contacts.unsubscribe(target.contactId, target.appId, origin, target.signupId);
    }
    return sendPage(reply, DONE_PAGE);
  }
}

/** Reads a multipart body to its end (bounded like the form body) so the connection stays usable. */
async function discardMultipart(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const parts = request.parts({
    limits: { files: 0, fields: FORM_FIELDS, fieldSize: FORM_BYTES, parts: FORM_FIELDS },
  });
  for await (const part of parts) if (part.type === 'file') part.file.resume();
}
