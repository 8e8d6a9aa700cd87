/**
 * The footer a campaign gets when its HTML has no visible unsubscribe link (docs/api/newsletters.md
 * "Unsubscribe links"): Gmail and Yahoo require one in the body of marketing mail, beside the
 * `List-Unsubscribe` header. Added when the campaign is rendered, so the stored content stays the author's.
 */

/** An `<a>` whose `href` is the unsubscribe link (`{{unsubscribeUrl}}` or `{{{unsubscribeUrl}}}`). */
const UNSUBSCRIBE_ANCHOR = /<a\b[^>]*?\bhref\s*=\s*["']?\s*\{\{\{?\s*unsubscribeUrl\s*\}\}\}?/i;

export const UNSUBSCRIBE_FOOTER_HTML =
  '<p style="font-size:12px;color:#666666">You receive this e-mail because you subscribed to it. ' +
  '<a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';
export const UNSUBSCRIBE_FOOTER_TEXT = '\n\nUnsubscribe: {{unsubscribeUrl}}\n';

export const hasUnsubscribeLink = (html: string): boolean => UNSUBSCRIBE_ANCHOR.test(html);

/** The HTML with the footer at its end (inside `<body>` when it has one) unless it has a link of its own. */
export function withUnsubscribeFooter(html: string): string {
  if (hasUnsubscribeLink(html)) return html;
  const bodyEnd = html.search(/<\/body\s*>/i);
  if (bodyEnd < 0) return `${html}${UNSUBSCRIBE_FOOTER_HTML}`;
  return `${html.slice(0, bodyEnd)}${UNSUBSCRIBE_FOOTER_HTML}${html.slice(bodyEnd)}`;
}

/** A text part that never names the link gets it too (one derived from the HTML has the HTML's footer). */
export const withUnsubscribeText = (text: string | null): string | null =>
  text === null || /\{\{\{?\s*unsubscribeUrl\s*\}\}\}?/.test(text)
    ? text
    : `${text}${UNSUBSCRIBE_FOOTER_TEXT}`;
