import { randomBytes } from 'node:crypto';
import type { FieldSource } from '../../email/templates/template-engine';
import { assertWithinLength, TemplateProblem } from '../../email/templates/template-limits';
import { checkInSandbox, renderInSandbox } from '../../email/templates/template-sandbox';
import { joinWithLinks, splitAtLinks, withOpenPixel } from '../../email/tracking/tracked-html';
import { withUnsubscribeFooter, withUnsubscribeText } from './unsubscribe-footer';

/** What a campaign's author writes: Handlebars sources. */
export interface CampaignContent {
  subject: string;
  htmlContent: string;
  textContent: string | null;
}

/** The variables every message of a campaign can use. */
export interface RecipientVariables {
  firstName: string | null;
  lastName: string | null;
  email: string;
  /** The person's unsubscribe page for this app (absent from test copies). */
  unsubscribeUrl: string;
}

/** The tracking URLs of one message: one per link of the campaign's link table, and the open pixel. */
export interface MessageTracking {
  links: string[];
  open: string;
}

export interface RenderedMessage {
  subject: string;
  html: string;
  text: string;
}

/**
 * The fields of a campaign as the template workers compile them; a campaign without a text part has one
 * derived from its HTML by the worker (html-to-text, cached there with the compile).
 */
function fieldsOf(content: Partial<CampaignContent>, html = content.htmlContent): FieldSource[] {
  const fields: FieldSource[] = [];
  if (typeof content.subject === 'string')
    fields.push({ field: 'subject', source: content.subject, mode: 'plain' });
  if (typeof html === 'string') fields.push({ field: 'htmlContent', source: html, mode: 'html' });
  if (typeof content.textContent === 'string')
    fields.push({ field: 'textContent', source: content.textContent, mode: 'plain' });
  else if (content.textContent === null && typeof content.htmlContent === 'string')
    fields.push({ field: 'textContent', source: content.htmlContent, mode: 'html-to-text' });
  return fields;
}

/**
 * Null, or a message naming the first field too long, not compiling or over the template budget (a 400
 * on create or edit). The fields compile as the messages render them, so those reuse the workers' compiles.
 */
export async function templateProblem(content: Partial<CampaignContent>): Promise<string | null> {
  const fields = fieldsOf(content).filter((f) => f.mode !== 'html-to-text');
  try {
    // Every field's length first: one field too long means nothing is compiled.
    for (const { field, source } of fields) assertWithinLength(field, source);
    await checkInSandbox(fields);
    return null;
  } catch (error) {
    if (error instanceof TemplateProblem) return error.message;
    throw error;
  }
}

/**
 * Where a tracked link or the open pixel goes in a tracked campaign's HTML: private-use characters around a
 * per-process nonce (unguessable, so no variable's value can pose as one) and the link's index (or `p`).
 * Plain text to Handlebars, so tracking adds no expression to compile, however many links there are.
 */
const MARK_OPEN = `\uE000${randomBytes(6).toString('hex')}`;
const MARK_CLOSE = '\uE001';
const MARKS = new RegExp(`${MARK_OPEN}(\\d+|p)${MARK_CLOSE}`, 'g');
const markOf = (slot: number | 'p') => `${MARK_OPEN}${slot}${MARK_CLOSE}`;

/**
 * A campaign rendered per person in the template workers (docs/decisions/campaigns-fan-out-and-tracking.md,
 * docs/decisions/security-template-sandbox.md). When tracked, each trackable link of the HTML becomes a
 * marker filled with the person's tracking URL after rendering, and the open pixel is appended, so the link
 * table (`links`) is the same for every message. The text part keeps the original URLs (no tracking: a text
 * link is copied, not clicked through a redirect).
 */
export class CampaignRenderer {
  private constructor(
    /** The URLs of the trackable links in order: the campaign's link table. */
    readonly links: string[],
    /** One array for every message, so the sandbox batches the messages of this campaign. */
    private readonly fields: FieldSource[],
  ) {}

  /** Throws a `TemplateProblem` when a field is too long, does not compile or is over the budget. */
  static async create(authored: CampaignContent, tracked: boolean): Promise<CampaignRenderer> {
    const content = {
      ...authored,
      htmlContent: withUnsubscribeFooter(authored.htmlContent),
      textContent: withUnsubscribeText(authored.textContent),
    };
    let html = content.htmlContent;
    let links: string[] = [];
    if (tracked) {
      const split = splitAtLinks(html);
      links = split.links;
      html = withOpenPixel(
        joinWithLinks(
          split,
          split.links.map((_, i) => markOf(i)),
        ),
        markOf('p'),
      );
    }
    const fields = fieldsOf({ ...content, textContent: content.textContent ?? null }, html);
    // The markers, the pixel and the footer are ours: only the author's characters count against the limit.
    assertWithinLength('subject', authored.subject);
    assertWithinLength('htmlContent', authored.htmlContent);
    if (authored.textContent !== null) assertWithinLength('textContent', authored.textContent);
    await checkInSandbox(fields);
    return new CampaignRenderer(links, fields);
  }

  async render(variables: RecipientVariables, tracking?: MessageTracking): Promise<RenderedMessage> {
    const [subject, rawHtml, text] = await renderInSandbox(this.fields, variables);
    const html = tracking
      ? rawHtml.replace(MARKS, (_mark, slot: string) =>
          slot === 'p' ? tracking.open : (tracking.links[Number(slot)] ?? ''),
        )
      : rawHtml;
    // The subject is one header line: line breaks from variables become spaces.
    return { subject: subject.replace(/[\r\n]+/g, ' ').trim(), html, text };
  }
}
