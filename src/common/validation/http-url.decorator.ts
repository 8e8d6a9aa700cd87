import { isURL, ValidateBy, type ValidationOptions } from 'class-validator';

/** http(s), no user:password part, a host (a name without a dot is fine: `http://chat-relay/hook`). */
const SYNTAX = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_tld: false,
  disallow_auth: true,
};

/** Control characters, whitespace and lone surrogates: never part of a URL sent as is. */
const UNSENDABLE = /[\u0000-\u0020\u007f-\u00a0\u2028\u2029\ud800-\udfff]/u;

/**
 * Whether `value` is an http(s) URL that both the syntax check and the WHATWG URL parser (which Node's
 * HTTP client and our own code use) accept. The syntax check alone lets through hosts the parser refuses,
 * such as an IPv6 zone id (`[fe80::1%25eth0]`), bad punycode (`xn--zz.com`) or a lone surrogate; each of
 * them turned into a 500 where the URL was parsed later.
 */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || UNSENDABLE.test(value) || !isURL(value, SYNTAX)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `@IsHttpUrl()`: a 400 naming the field, with the same message as `@IsUrl()`. */
export const IsHttpUrl = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: isHttpUrl,
        defaultMessage: (args) => `${args?.property ?? 'value'} must be a URL address`,
      },
    },
    options,
  );
