import { bearerToken } from './bearer-token';
import { BACK_OFFICE_AUDIENCE } from './token-audiences';

/**
 * The header that carries an app end user's token. A header of its own, not `Authorization`, so the
 * document's `end-user` scheme is an apiKey scheme that generated clients hold apart from the back-office
 * bearer token (with two HTTP bearer schemes they kept one token and sent it for both).
 */
export const END_USER_TOKEN_HEADER = 'x-end-user-token';

type RequestHeaders = { headers: Record<string, string | string[] | undefined> };

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/**
 * The end-user token a request presents: its own header when sent, else `Authorization: Bearer`, how
 * callers sent it before the header existed (still accepted, so they keep working). A header that is not a
 * JWT gives null (the strategy then refuses).
 */
export function endUserToken(request: RequestHeaders): string | null {
  const own = request.headers[END_USER_TOKEN_HEADER];
  if (own !== undefined) return typeof own === 'string' && JWT_SHAPE.test(own) ? own : null;
  return bearerToken(request);
}

/** The audience a JWT claims, read without verifying it (only to tell which kind of token it is). */
function claimedAudience(token: string): unknown {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as unknown;
    return typeof payload === 'object' && payload !== null ? (payload as { aud?: unknown }).aud : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request offers an end-user token on a route where one is optional: its own header, or an
 * `Authorization` header that is not a back-office token. A back-office token there is a credential of
 * another kind that the route does not take, so it is passed over like on every API-key route, never
 * read as a bad end-user token (a client that sends its admin token on every call got a 401 there).
 * Passing it over grants nothing: the key alone is what the route needs. Anything else in
 * `Authorization` is checked as an end-user token, so a broken one is still a 401.
 */
export function offersEndUserToken(request: RequestHeaders): boolean {
  if (request.headers[END_USER_TOKEN_HEADER] !== undefined) return true;
  if (request.headers.authorization === undefined) return false;
  const token = bearerToken(request);
  return !token || claimedAudience(token) !== BACK_OFFICE_AUDIENCE;
}

/** Whether a request sent anything where an end-user token goes (for the 401 message). */
export function sentEndUserToken(request: RequestHeaders): boolean {
  return request.headers[END_USER_TOKEN_HEADER] !== undefined || request.headers.authorization !== undefined;
}
