import Handlebars from 'handlebars';
import { convert } from 'html-to-text';
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

/** An isolated Handlebars environment: no helper or partial registered elsewhere leaks in. */
const engine = Handlebars.create();

/** Headings and table headers keep their case: upper-casing would also turn `{{firstName}}` into `{{FIRSTNAME}}`. */
const HTML_TO_TEXT = {
  wordwrap: 78,
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

/** Throws a message naming the first field whose Handlebars does not compile (a 400 on create or edit). */
export function templateProblem(content: Partial<CampaignContent>): string | null {
  for (const field of ['subject', 'htmlContent', 'textContent'] as const) {
    const source = content[field];
    if (typeof source !== 'string') continue;
    try {
      engine.compile(source, { strict: false })({});
    } catch (error) {
      return `${field}: ${(error as Error).message.split('\n')[0]}`;
    }
  }
  return null;
}

/**
 * A campaign compiled once per plan run and rendered per person (DESIGN "Campaigns"). When tracked, each
 * trackable link of the HTML becomes `{{{tracking.links.[i]}}}` and the open pixel is appended, so the
 * per-person URLs fill in at render time and the link table (`links`) is the same for every message. The
 * text part keeps the original URLs (no tracking: a text link is copied, not clicked through a redirect).
 */
export class CampaignRenderer {
  /** The URLs of the trackable links in order: the campaign's link table. */
  readonly links: string[];
  private readonly subject: HandlebarsTemplateDelegate;
  private readonly html: HandlebarsTemplateDelegate;
  private readonly text: HandlebarsTemplateDelegate;

  constructor(content: CampaignContent, tracked: boolean) {
    let html = content.htmlContent;
    if (tracked) {
      const split = splitAtLinks(html);
      this.links = split.links;
      html = joinWithLinks(
        split,
        split.links.map((_, i) => `{{{tracking.links.[${i}]}}}`),
      );
      html = withOpenPixel(html, '{{{tracking.open}}}');
    } else {
      this.links = [];
    }
    this.subject = engine.compile(content.subject, { strict: false, noEscape: true });
    this.html = engine.compile(html, { strict: false });
    this.text = engine.compile(content.textContent ?? textFromHtml(content.htmlContent), {
      strict: false,
      noEscape: true,
    });
  }

  render(variables: RecipientVariables, tracking?: MessageTracking): RenderedMessage {
    const context = { ...variables, tracking };
    return {
      // One header line: line breaks from variables become spaces.
      subject: this.subject(context)
        .replace(/[\r\n]+/g, ' ')
        .trim(),
      html: this.html(context),
      text: this.text(context),
    };
  }
}
