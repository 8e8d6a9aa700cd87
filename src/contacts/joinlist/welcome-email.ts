import { isPlainName } from '../../common/validation/plain-name';
import type { EmailMessage } from '../../email/jobs/email-message';

/** The template an app stores to replace the built-in welcome (per language, see EmailTemplatesService). */
export const WELCOME_TEMPLATE = 'welcome';

export interface WelcomeDetails {
  to: string;
  appId: string;
  appName: string;
  firstName: string | null;
  unsubscribeUrl: string;
}

/**
 * The stored first name as the welcome may print it: left out when it is not a plain name (one stored before
 * the joinlist refused such names, or given by another route), so the welcome never carries a link or a
 * line break the person did not write (docs/api/browser-forms.md "Names in mail").
 */
const mailName = (firstName: string | null): string => (firstName && isPlainName(firstName) ? firstName : '');

/** The variables a stored `welcome` template may use. */
export function welcomeVariables(details: WelcomeDetails): Record<string, unknown> {
  return {
    firstName: mailName(details.firstName),
    email: details.to,
    appName: details.appName,
    unsubscribeUrl: details.unsubscribeUrl,
  };
}

export const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** The welcome sent when the app has no `welcome` template: short, plain, with the unsubscribe link. */
export function builtInWelcome(details: WelcomeDetails): Pick<EmailMessage, 'subject' | 'html' | 'text'> {
  const name = mailName(details.firstName);
  const greeting = name ? `Hello ${name},` : 'Hello,';
  const subject = `Welcome to ${details.appName}`;
  const text = [
    greeting,
    '',
    `thank you for joining the ${details.appName} newsletter. We will write when there is news.`,
    '',
    `To stop receiving it: ${details.unsubscribeUrl}`,
  ].join('\n');
  const html = [
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>thank you for joining the ${escapeHtml(details.appName)} newsletter. We will write when there is news.</p>`,
    `<p><a href="${escapeHtml(details.unsubscribeUrl)}">Unsubscribe</a></p>`,
  ].join('\n');
  return { subject, html, text };
}
