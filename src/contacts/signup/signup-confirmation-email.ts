import type { RenderedContent } from '../../email/delivery/template-source';
import { escapeHtml } from '../joinlist/welcome-email';

/**
 * The confirmation mail of a held-back signup: says who asked for what, that ignoring it is enough, and
 * carries the link. Built in (no app template), like the text of the pages it leads to.
 */
export function confirmationMail(appName: string, link: string): RenderedContent {
  const subject = `Confirm your subscription to ${appName}`;
  const asked = `Someone, we hope you, asked to receive the ${appName} newsletter at this address.`;
  const ignore = 'If it was not you, ignore this e-mail: you will not be subscribed.';
  const text = ['Hello,', '', asked, '', `To confirm, open this link: ${link}`, '', ignore].join('\n');
  const html = [
    '<p>Hello,</p>',
    `<p>${escapeHtml(asked)}</p>`,
    `<p><a href="${escapeHtml(link)}">Confirm my subscription</a></p>`,
    `<p>${escapeHtml(ignore)}</p>`,
  ].join('\n');
  return { subject, html, text };
}
