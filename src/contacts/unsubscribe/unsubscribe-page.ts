import { HttpStatus } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';

/**
 * The unsubscribe pages: small, accessible, no JavaScript, no external resources, and the same for every
 * token (docs/architecture.md "Unsubscribe": nothing tells a valid token from an invalid one). The
 * confirmation page's button POSTs to the page's own URL, so a link scanner that follows the GET unsubscribes
 * no one. The signup confirmation pages are built the same way.
 */
const STYLE = [
  'body{font-family:system-ui,sans-serif;margin:0;padding:2rem 1rem;background:#f6f6f6;color:#1a1a1a}',
  'main{max-width:32rem;margin:0 auto;background:#fff;padding:2rem;border-radius:8px}',
  'h1{font-size:1.5rem;margin-top:0}',
  'button{font:inherit;font-size:1rem;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#1a56db;color:#fff;cursor:pointer}',
  'button:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}',
  'fieldset{border:0;padding:0;margin:0 0 1rem}legend{font-weight:600;margin-bottom:.5rem}',
  'label{display:block;margin:.5rem 0}input{margin-right:.5rem}',
  'button.secondary{background:#4b5563}',
].join('');

/**
 * The pages' Content-Security-Policy: nothing loads, the one inline style is allowed by its hash, and the
 * form may only post back to this service.
 */
export const UNSUBSCRIBE_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The GET page: asks, and offers one button (an empty `action` posts to the same URL). */
export const CONFIRM_PAGE = page(
  'Unsubscribe',
  `<h1>Unsubscribe</h1>
<p>Do you want to stop receiving these e-mails?</p>
<form method="post" action="">
<button type="submit">Unsubscribe</button>
</form>`,
);

/** The POST answer, whatever the token was. */
export const DONE_PAGE = page(
  'Unsubscribed',
  `<h1 role="status">You are unsubscribed</h1>
<p>You will not receive these e-mails any more. If this was a mistake, sign up again where you first did.</p>`,
);

/** Sends one of these pages: never cached, under the pages' Content-Security-Policy. */
export function sendPage(reply: FastifyReply, html: string) {
  return reply
    .status(HttpStatus.OK)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', UNSUBSCRIBE_PAGE_CSP)
    .header('cache-control', 'no-store')
    .send(html);
}
