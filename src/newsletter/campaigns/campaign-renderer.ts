import { createHash, randomBytes } from 'node:crypto';
import { convert } from 'html-to-text';
import {
  type Compiled,
  compileTemplate,
  runTemplate,
  type TemplateMode,
} from '../../email/templates/template-compiler';
import { assertWithinLimits, TemplateProblem } from '../../email/templates/template-limits';
import { joinWithLinks, splitAtLinks, withOpenPixel } from '../../email/tracking/tracked-html';

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

/** Headings and table headers keep their case: upper-casing would also turn `{{firstName}}` into `{{FIRSTNAME}}`. */
const HTML_TO_TEXT = {
  wordwrap: 78,
  // Deeper elements are cut (with `...`): the converter recurses, and 20,000 nested tags overflowed the stack.
  limits: { maxDepth: 40 },
  selectors: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', options: { uppercaseHeaderCells: false } },
    { selector: 'img', format: 'skip' },
  ],
};

/** The plain-text part of HTML that has none: a well-kept converter (html-to-text), links kept in brackets. */
export function textFromHtml(html: string): string {
  return convert(html, HTML_TO_TEXT);
}

/** Plain-text parts derived from HTML, by the HTML's SHA-256: the conversion costs more than the compile. */
const DERIVED_TEXTS_MAX = 50;
const derivedTexts = new Map<string, string>();

/** The text part of a campaign: its own, else converted from its HTML (once per HTML in this process). */
function textSourceOf(content: CampaignContent): string {
  if (content.textContent !== null) return content.textContent;
  const key = createHash('sha256').update(content.htmlContent).digest('base64url');
  let text = derivedTexts.get(key);
  if (text === undefined) {
    text = textFromHtml(content.htmlContent);
    if (derivedTexts.size >= DERIVED_TEXTS_MAX) derivedTexts.delete(derivedTexts.keys().next().value!);
  } else {
    derivedTexts.delete(key);
  }
  derivedTexts.set(key, text);
  return text;
}

/**
 * Null, or a message naming the first field over a template limit or not compiling (a 400 on create or
 * edit, a refused test copy). The fields compile exactly as the test copy renders them, so that copy and the
 * plan's messages reuse these compiles (template-compiler.ts).
 */
export function templateProblem(content: Partial<CampaignContent>): string | null {
  const fields: [string, string, TemplateMode][] = [];
  if (typeof content.subject === 'string') fields.push(['subject', content.subject, 'plain']);
  if (typeof content.htmlContent === 'string') fields.push(['htmlContent', content.htmlContent, 'html']);
  if (typeof content.textContent === 'string') fields.push(['textContent', content.textContent, 'plain']);
  try {
    // Every field's size and expressions first: one over-limit field means nothing is compiled.
    for (const [field, source] of fields) assertWithinLimits(field, source);
    for (const [field, source, mode] of fields) compileTemplate(field, source, mode);
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
 * A campaign compiled once per content (template-compiler.ts) and rendered per person (DESIGN "Campaigns").
 * When tracked, each trackable link of the HTML becomes a marker filled with the person's tracking URL after
 * rendering, and the open pixel is appended, so the link table (`links`) is the same for every message.
 * The text part keeps the original URLs (no tracking: a text link is copied, not clicked through a redirect).
 */
export class CampaignRenderer {
  /** The URLs of the trackable links in order: the campaign's link table. */
  readonly links: string[];
  private readonly subject: Compiled;
  private readonly html: Compiled;
  private readonly text: Compiled;

  /** Throws a `TemplateProblem` when a field is over a limit or does not compile. */
  constructor(content: CampaignContent, tracked: boolean) {
    let html = content.htmlContent;
    let added = 0;
    if (tracked) {
      const split = splitAtLinks(html);
      this.links = split.links;
      html = withOpenPixel(
        joinWithLinks(
          split,
          split.links.map((_, i) => markOf(i)),
        ),
        markOf('p'),
      );
      // The markers and the pixel are ours: only the author's characters count against the size limit.
      added = Math.max(0, html.length - content.htmlContent.length);
    } else {
      this.links = [];
    }
    this.subject = compileTemplate('subject', content.subject, 'plain');
    this.html = compileTemplate('htmlContent', html, 'html', added);
    this.text = compileTemplate('textContent', textSourceOf(content), 'plain');
  }

  render(variables: RecipientVariables, tracking?: MessageTracking): RenderedMessage {
    let html = runTemplate('htmlContent', this.html, variables);
    if (tracking)
      html = html.replace(MARKS, (_mark, slot: string) =>
        slot === 'p' ? tracking.open : (tracking.links[Number(slot)] ?? ''),
      );
    return {
      // One header line: line breaks from variables become spaces.
      subject: runTemplate('subject', this.subject, variables)
        .replace(/[\r\n]+/g, ' ')
        .trim(),
      html,
      text: runTemplate('textContent', this.text, variables),
    };
  }
}
