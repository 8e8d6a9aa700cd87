import { Controller, Get, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../common/auth/public.decorator';
import { ApiErrors } from '../../common/swagger/envelope.decorators';
import { AcceptsBody } from '../../common/http/body/body-policy';
import { clientIp } from '../../common/http/client-ip';
import { LinkDomains } from '../../sender-domains/link-domains';
import type { ChangeOrigin } from '../contact-ledger';
import { ContactsService } from '../contacts.service';
import {
  ACTION_FIELD,
  CSRF_FIELD,
  LEAVE_ACTION,
  NOT_CHANGED_PAGE,
  preferencePage,
  SAVE_ACTION,
  SAVED_PAGE,
  TOPIC_DONE_PAGE,
  TOPIC_FIELD,
} from './preference-page';
import { TopicPreferences } from './topic-preferences';
import { CONFIRM_PAGE, DONE_PAGE, sendPage } from './unsubscribe-page';
import { type UnsubscribeTarget, UnsubscribeLinks } from './unsubscribe-links';

const HTML_PAGE = {
  description: 'An HTML page, the same for valid and invalid tokens',
  content: { 'text/html': { schema: { type: 'string' } } },
};
/**
 * An unsubscribe POST's whole body: `List-Unsubscribe=One-Click`, or the preference form (the token, an
 * action and up to TOPICS_MAX topic keys).
 */
const FORM_BYTES = 4096;
const FORM_FIELDS = 30;
const TOKEN_PARAM = {
  name: 'token',
  // Typed on GET too, where no handler argument gives Swagger the type (generated clients need one).
  type: String,
  description: 'Signed unsubscribe token from an e-mail or a joinlist answer',
};

/**
 * The unsubscribe link of every newsletter mail (docs/architecture.md "Unsubscribe"). GET shows a
 * confirmation page, or, to a subscriber of an app with topics, the preference page (keep or drop each
 * topic, or leave). POST changes at once: the page's forms (their `csrf` field must repeat the token), and
 * the RFC 8058 one-click POST of mailbox providers (`List-Unsubscribe=One-Click`, form-encoded, no
 * credentials), which drops the campaign's topic when the link names one and otherwise unsubscribes. Both
 * answer 200 HTML whatever the token.
 */
@ApiTags('Joinlist')
@Controller('unsubscribe')
@Public()
export class UnsubscribeController {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly contacts: ContactsService,
    private readonly preferences: TopicPreferences,
    private readonly linkDomains: LinkDomains,
  ) {}

  @Get(':token')
  @ApiOperation({
    operationId: 'unsubscribePage',
    summary: 'The unsubscribe confirmation page, or the topic preference page (no change)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiProduces('text/html')
  @ApiOkResponse(HTML_PAGE)
  async confirm(@Param('token') token: string, @Res() reply: FastifyReply) {
    const target = this.links.read(token);
    await this.linkDomains.assertAnswers(reply.request.hostname, target?.appId);
    // A signup's answer (sealed, sent to whoever filled the form) never shows the person's choices.
    const choices =
      target && target.signupId === undefined
        ? await this.preferences.choices(target.contactId, target.appId)
        : null;
    return sendPage(reply, choices ? preferencePage(token, choices) : CONFIRM_PAGE);
  }

  @Post(':token')
  @HttpCode(HttpStatus.OK)
  // The page's forms and the one-click POST are form-encoded; a one-click POST may be multipart (RFC 8058
  // §3.2 prefers it), whose content is not needed: the token is the whole request.
  @AcceptsBody({ maxBytes: FORM_BYTES, maxFields: FORM_FIELDS, form: true, multipart: true })
  @ApiOperation({
    operationId: 'unsubscribeByToken',
    summary: 'Unsubscribe or save topic choices at once (the page’s forms and the RFC 8058 one-click target)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiProduces('text/html')
  @ApiOkResponse(HTML_PAGE)
  async unsubscribe(
    @Param('token') token: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const form = request.isMultipart() ? {} : formOf(request.body);
    await discardMultipart(request);
    const target = this.links.read(token);
    await this.linkDomains.assertAnswers(request.hostname, target?.appId);
    const action = first(form[ACTION_FIELD]);
    if (action !== undefined && first(form[CSRF_FIELD]) !== token) return sendPage(reply, NOT_CHANGED_PAGE);
    const origin = { source: 'unsubscribe', actor: 'self', ip: clientIp(request) };
    if (action === SAVE_ACTION) {
      if (target) await this.save(target, all(form[TOPIC_FIELD]), origin);
      return sendPage(reply, SAVED_PAGE);
    }
    if (action !== LEAVE_ACTION && target?.topic !== undefined) {
      const dropped = { ...origin, source: 'unsubscribe.one-click' };
      await this.preferences.drop(target.contactId, target.appId, target.topic, dropped);
      return sendPage(reply, TOPIC_DONE_PAGE);
    }
    if (target) await this.contacts.unsubscribe(target.contactId, target.appId, origin, target.signupId);
    return sendPage(reply, DONE_PAGE);
  }

  private async save(target: UnsubscribeTarget, kept: string[], origin: ChangeOrigin): Promise<void> {
    if (target.signupId !== undefined) return;
    await this.preferences.save(target.contactId, target.appId, kept, { ...origin, source: 'preferences' });
  }
}

type FormValue = string | string[] | undefined;

/** The parsed form-encoded body (repeated fields are arrays); anything else is an empty form. */
function formOf(body: unknown): Record<string, FormValue> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, FormValue>) : {};
}

const first = (value: FormValue) => (Array.isArray(value) ? value[0] : value);
const all = (value: FormValue) => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

/** Reads a multipart body to its end (bounded like the form body) so the connection stays usable. */
async function discardMultipart(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const parts = request.parts({
    limits: { files: 0, fields: FORM_FIELDS, fieldSize: FORM_BYTES, parts: FORM_FIELDS },
  });
  for await (const part of parts) if (part.type === 'file') part.file.resume();
}
