import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import { TOKEN_ISSUER } from './jwt-options';

type RequestWithHeaders = { headers: Record<string, string | string[] | undefined> };

/**
 * The JWT a request presents (`extract`) when its HS256 signature is one of `key`'s, else null: one HMAC
 * over the header and payload as sent, before any of it is decoded, so a forged or foreign token costs no
 * parsing. Each request is checked once: the refusal before Nest and the strategy ask the same function.
 */
export function signedToken<R extends RequestWithHeaders>(
  key: KeyObject,
  extract: (request: R) => string | null,
): (request: R) => string | null {
  const checked = new WeakMap<R, string | null>();
  return (request) => {
    const known = checked.get(request);
    if (known !== undefined) return known;
    const token = extract(request);
    const signed = token !== null && signatureMatches(token, key) ? token : null;
    checked.set(request, signed);
    return signed;
  };
}

function signatureMatches(token: string, key: KeyObject): boolean {
  const dot = token.lastIndexOf('.');
  const expected = createHmac('sha256', key).update(token.slice(0, dot)).digest();
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The claims of a token whose signature `signedToken` checked, when the token is one of ours for `audience`
 * and in force at `nowMs`, else null. What jsonwebtoken's `verify` checked for the strategies before
 * (docs/decisions/auth-credential-checks-without-passport.md): the header names HS256 (the only algorithm
 * the signature was checked with); `iss` is ours; `aud` is `audience` or a list holding it; `exp` is a
 * number and not reached (a token without one would never expire, so it is refused); `nbf` and `iat`, when
 * present, are numbers, and `nbf` is reached. Times are whole seconds, as in the token. The claims of the
 * strategy's own (`Claims`) are as the token holds them: the strategy checks their types.
 */
export function tokenClaims<Claims extends object>(
  signed: string,
  audience: string,
  nowMs = Date.now(),
): Partial<Claims> | null {
  const [encodedHeader, encodedPayload] = signed.split('.');
  const header = jsonObject(encodedHeader);
  const claims = jsonObject(encodedPayload);
  if (header?.alg !== 'HS256' || !claims || claims.iss !== TOKEN_ISSUER) return null;
  const { aud, exp, nbf, iat } = claims;
  if (aud !== audience && !(Array.isArray(aud) && aud.includes(audience))) return null;
  const now = Math.floor(nowMs / 1000);
  if (typeof exp !== 'number' || now >= exp) return null;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) return null;
  if (iat !== undefined && typeof iat !== 'number') return null;
  return claims as Partial<Claims>;
}

function jsonObject(base64url: string | undefined): Record<string, unknown> | null {
  if (!base64url) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
