import { redirectTarget } from './redirect-target';

/**
 * Finding the links of a campaign's HTML that click tracking rewrites (pure). Only `href` attributes of
 * `<a>` elements with a literal http(s) URL count: `mailto:`, anchors and links built from Handlebars
 * expressions (`{{unsubscribeUrl}}`, `https://…?u={{email}}`) stay as written, so the unsubscribe link is
 * never wrapped and no per-person URL ends up in the campaign's shared link table. The table holds each link
 * normalised (`redirectTarget`), so every one can be sent as a `Location` header; a link that cannot be
 * normalised stays as written, untracked, rather than failing the campaign.
 */
const ANCHOR_START = /<a\b/gi;
/** Matched against one tag's text only (from `<a` to its `>`), so no scan runs past the tag. */
const ANCHOR_HREF = /^(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"'<>]*)\2/i;

export interface SplitHtml {
  /** The HTML around the tracked links: `segments[i]`, link i, `segments[i + 1]`, … */
  segments: string[];
  /** The links' URLs, normalised, in document order (the campaign's link table; index = position here). */
  links: string[];
}

/** Splits the HTML at each trackable link's URL. `segments.length === links.length + 1`. */
export function splitAtLinks(html: string): SplitHtml {
  const segments: string[] = [];
  const links: string[] = [];
  let last = 0;
  ANCHOR_START.lastIndex = 0;
  // One `<a` at a time, up to its `>`: a regex over the whole HTML re-scanned the rest of an unclosed tag
  // for every `<a` in it (quadratic: 60 KB of `<a ` took 0.4 s). A tag without `>` ends the search.
  for (let open = ANCHOR_START.exec(html); open; open = ANCHOR_START.exec(html)) {
    const close = html.indexOf('>', open.index);
    if (close < 0) break;
    ANCHOR_START.lastIndex = close + 1;
    const match = ANCHOR_HREF.exec(html.slice(open.index, close + 1));
    if (!match || match[3].includes('{{')) continue;
    const url = match[3];
    // An attribute value's `&amp;` is `&` in the URL the browser would follow.
    const target = redirectTarget(url.replace(/&amp;/g, '&'));
    if (!target) continue;
    const start = open.index + match[1].length + match[2].length;
    segments.push(html.slice(last, start));
    links.push(target);
    last = start + url.length;
  }
  segments.push(html.slice(last));
  return { segments, links };
}

/** Joins the segments with one replacement URL per link (already attribute-safe: URL characters only). */
export function joinWithLinks(split: SplitHtml, urls: readonly string[]): string {
  let html = split.segments[0];
  for (let i = 0; i < split.links.length; i++) html += urls[i] + split.segments[i + 1];
  return html;
}

/** Appends the open pixel before `</body>` (or at the end of a fragment). */
export function withOpenPixel(html: string, pixelUrl: string): string {
  const pixel = `<img src="${pixelUrl}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
  const close = html.search(/<\/body\s*>/i);
  return close >= 0 ? html.slice(0, close) + pixel + html.slice(close) : html + pixel;
}
