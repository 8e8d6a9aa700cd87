import { isIP } from 'node:net';

/** Hosts that only this machine (or nobody) can reach: mail naming them cannot be answered or followed. */
function placeholderHost(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return 'localhost';
  if (isIP(bare) !== 0) return 'an IP address';
  return undefined;
}

/**
 * Production mail names real, public hosts: the From domain is what receivers authenticate (SPF, DKIM,
 * DMARC), and PUBLIC_BASE_URL carries the unsubscribe, click and confirmation links every message holds,
 * which must be https on a name (docs/operations/sending-domains.md). One line per variable.
 */
export function publicAddressProblems(env: { MAIL_FROM: string; PUBLIC_BASE_URL?: string }): string[] {
  const problems: string[] = [];
  const fromHost = /@\[?([^\s>\]]+)\]?>?\s*$/.exec(env.MAIL_FROM.trim())?.[1] ?? '';
  const fromPlaceholder = fromHost ? placeholderHost(fromHost) : 'no domain';
  if (fromPlaceholder) {
    problems.push(
      `  MAIL_FROM: is on ${fromPlaceholder} (${fromHost || env.MAIL_FROM}); when ` +
        'NODE_ENV=production give an address on your sending domain, e.g. News <news@mail.example.com>',
    );
  }
  if (!env.PUBLIC_BASE_URL) {
    problems.push(
      '  PUBLIC_BASE_URL: is required when NODE_ENV=production (links in mail would point to localhost), ' +
        'e.g. https://mail.example.com',
    );
    return problems;
  }
  let url: URL | undefined;
  try {
    url = new URL(env.PUBLIC_BASE_URL);
  } catch {
    return problems; // the format rule already names it
  }
  const hostProblem = placeholderHost(url.hostname);
  if (url.protocol !== 'https:' || hostProblem) {
    const what = hostProblem ? `is on ${hostProblem} (${url.hostname})` : 'is plain http';
    problems.push(
      `  PUBLIC_BASE_URL: ${what}; when NODE_ENV=production links in mail need https on a public name, ` +
        'e.g. https://mail.example.com',
    );
  }
  return problems;
}
