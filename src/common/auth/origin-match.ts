/**
 * Origin rules shared by the API-key and publishable-key guards. A pattern is `*` (any origin), a full URL
 * (`https://shop.example.com`, compared by its origin: scheme, host and port), `*.example.com` (any
 * subdomain of example.com, any scheme and port) or `https://*.example.com` (subdomains, that scheme).
 * The bare domain never matches its own wildcard: list it separately.
 */
const WILDCARD =
  /^(?:(https?):\/\/)?\*\.((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?::(\d{1,5}))?$/i;

interface ParsedOrigin {
  protocol: string;
  hostname: string;
  port: string;
  origin: string;
}

function parseOrigin(value: string): ParsedOrigin | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return null;
  return { protocol: url.protocol.slice(0, -1), hostname: url.hostname, port: url.port, origin: url.origin };
}

/** Whether a string is an acceptable allowedOrigins entry (checked on input, so stored rules are valid). */
export function isOriginPattern(pattern: string): boolean {
  if (pattern === '*' || WILDCARD.test(pattern)) return true;
  const url = parseOrigin(pattern);
  return url !== null && !url.hostname.includes('*');
}

function matchesOne(origin: ParsedOrigin, pattern: string): boolean {
  if (pattern === '*') return true;
  const wildcard = WILDCARD.exec(pattern);
  if (wildcard) {
    const [, protocol, domain, port] = wildcard;
    if (protocol && protocol.toLowerCase() !== origin.protocol) return false;
    if (port !== undefined && port !== origin.port) return false;
    return origin.hostname.endsWith(`.${domain.toLowerCase()}`);
  }
  return parseOrigin(pattern)?.origin === origin.origin;
}

/** Whether the request's `Origin` header value is allowed by one of the patterns. */
export function originMatches(origin: string | undefined, patterns: readonly string[]): boolean {
  if (!origin) return false;
  const parsed = parseOrigin(origin);
  if (!parsed) return false;
  return patterns.some((pattern) => matchesOne(parsed, pattern));
}
