/**
 * What a `Location` header can carry as it is: visible ASCII only (no space, no control, no other script).
 */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * A link as the click redirect stores and sends it (pure): an absolute http(s) URL parsed and written out
 * again by the WHATWG URL parser, so the host is in punycode (`例え.jp` → `xn--r8jz45g.jp`), the rest is
 * percent-encoded UTF-8 (`café` → `caf%C3%A9`, a space → `%20`) and tabs and line breaks are gone, as a
 * browser following the same link would do. Null for anything else (not parseable, another scheme, or, to
 * be sure, anything a header could not carry): such a link is not tracked, and a stored one is not followed.
 */
export function redirectTarget(link: string): string | null {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return HEADER_SAFE.test(url.href) ? url.href : null;
}
