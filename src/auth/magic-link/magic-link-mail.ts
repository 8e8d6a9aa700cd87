/**
 * Where a magic link points and what its e-mail says when the app has no `magic-link` template (pure: no
 * Nest, no database).
 */

/** The e-mail template an app (or the global scope) may define to word its own sign-in mail. */
export const MAGIC_LINK_TEMPLATE = 'magic-link';

/** The parts of an app record the link depends on. */
export interface LinkTarget {
  name: string;
  features?: Record<string, unknown> | null;
  allowedOrigins?: readonly string[] | null;
}

/** What a `magic-link` template (and the built-in text) can use. */
export interface MagicLinkVariables {
  /** The sign-in URL with `token=` in its query. */
  link: string;
  appName: string;
  email: string;
  expiresInMinutes: number;
}

function httpUrl(value: unknown): URL | null {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/**
 * The page that receives the token, first of: the app's `features.magicLinkUrl` (an http(s) URL: the app's
 * own sign-in page, which posts the token to verify), the app's first exact `allowedOrigins` entry (its
 * front end; wildcards name no single page), else the service's PUBLIC_BASE_URL.
 */
export function magicLinkPage(app: LinkTarget, publicBaseUrl: string): URL {
  const configured = httpUrl(app.features?.magicLinkUrl);
  if (configured) return configured;
  for (const origin of app.allowedOrigins ?? []) {
    if (origin.includes('*')) continue;
    const url = httpUrl(origin);
    if (url) return new URL(url.origin);
  }
  return new URL(publicBaseUrl);
}

/** The page with `token` in its query, whatever query it already has (`?token=` or `&token=`). */
export function magicLinkUrl(page: URL, token: string): string {
  const url = new URL(page);
  url.searchParams.set('token', token);
  return url.toString();
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/** The built-in sign-in mail: subject, text and HTML (every value escaped in the HTML). */
export function defaultMagicLinkContent(variables: MagicLinkVariables): {
  subject: string;
  text: string;
  html: string;
} {
  const { link, appName, expiresInMinutes } = variables;
  // One header line: an app name cannot add headers or break the subject.
  const subject = `Your sign-in link for ${appName}`.replace(/[\r\n]+/g, ' ');
  const text = [
    `Sign in to ${appName} with this link:`,
    '',
    link,
    '',
    `It works once and expires in ${expiresInMinutes} minutes.`,
    'If you did not ask for it, ignore this e-mail: nobody can sign in without the link.',
  ].join('\n');
  const html = [
    `<p>Sign in to ${escapeHtml(appName)} with this link:</p>`,
    `<p><a href="${escapeHtml(link)}">Sign in to ${escapeHtml(appName)}</a></p>`,
    `<p>It works once and expires in ${expiresInMinutes} minutes.</p>`,
    '<p>If you did not ask for it, ignore this e-mail: nobody can sign in without the link.</p>',
  ].join('\n');
  return { subject, text, html };
}
