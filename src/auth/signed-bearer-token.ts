import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../common/auth/bearer-token';

type RequestWithHeaders = { headers: Record<string, string | string[] | undefined> };

/**
 * The bearer JWT of a request when its HS256 signature is one of `key`'s, else null: one HMAC over the
 * header and payload as sent, before any of it is decoded, so a forged or foreign token costs no parsing.
 * passport-jwt then verifies the token fully (algorithm, issuer, audience, expiry) with the same key.
 */
export function signedBearerToken(key: KeyObject): (request: RequestWithHeaders) => string | null {
  return (request) => {
    const token = bearerToken(request);
    if (!token) return null;
    const dot = token.lastIndexOf('.');
    const expected = createHmac('sha256', key).update(token.slice(0, dot)).digest();
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
  };
}
