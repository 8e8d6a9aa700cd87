import { createHmac, createSecretKey } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { TOKEN_ISSUER } from './jwt-options';
import { signedToken, tokenClaims } from './signed-token';

const key = createSecretKey(Buffer.alloc(32, 7));
const otherKey = createSecretKey(Buffer.alloc(32, 8));
const jwt = new JwtService();
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const nowS = NOW / 1000;

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token signed with `key` over the header and claims given, whatever they hold. */
function handMade(header: unknown, claims: unknown, signingKey = key): string {
  const signed = `${segment(header)}.${segment(claims)}`;
  return `${signed}.${createHmac('sha256', signingKey).update(signed).digest('base64url')}`;
}

const good = { iss: TOKEN_ISSUER, aud: 'back-office', sub: 'u1', iat: nowS - 10, exp: nowS + 60 };
const HS256 = { alg: 'HS256', typ: 'JWT' };
const request = (authorization?: string) => ({ headers: authorization ? { authorization } : {} });
const bearer = (request: { headers: Record<string, string | string[] | undefined> }) => {
  const header = request.headers.authorization;
  return typeof header === 'string' ? header.slice('Bearer '.length) : null;
};

describe('signedToken', () => {
  const signed = signedToken(key, bearer);

  it("passes a token signed with the key, as sent, and refuses another key's or a changed one", async () => {
    const token = await jwt.signAsync({ sub: 'u1' }, { privateKey: key, algorithm: 'HS256' });
    expect(signed(request(`Bearer ${token}`))).toBe(token);
    const foreign = await jwt.signAsync({ sub: 'u1' }, { privateKey: otherKey, algorithm: 'HS256' });
    expect(signed(request(`Bearer ${foreign}`))).toBeNull();
    const [header, , signature] = token.split('.');
    expect(signed(request(`Bearer ${header}.${segment({ sub: 'admin' })}.${signature}`))).toBeNull();
    expect(signed(request(`Bearer ${header}.${segment({ sub: 'u1' })}.`))).toBeNull();
    expect(signed(request())).toBeNull();
  });

  it('checks each request once', () => {
    const extract = jest.fn(bearer);
    const once = signedToken(key, extract);
    const asked = request(`Bearer ${handMade(HS256, good)}`);
    expect(once(asked)).not.toBeNull();
    expect(once(asked)).toBe(once(asked));
    expect(extract).toHaveBeenCalledTimes(1);
  });
});

describe('tokenClaims', () => {
  const claimsOf = (header: unknown, claims: unknown, audience = 'back-office') =>
    tokenClaims(handMade(header, claims), audience, NOW);

  it('reads the claims of a token of ours for the audience, in force', () => {
    expect(claimsOf(HS256, good)).toEqual(good);
    expect(claimsOf(HS256, { ...good, aud: ['other', 'back-office'] })).toMatchObject({ sub: 'u1' });
    expect(claimsOf(HS256, { ...good, nbf: nowS })).toMatchObject({ sub: 'u1' });
  });

  it.each([
    ['another algorithm in the header', { alg: 'none' }, good],
    ['a header without an algorithm', { typ: 'JWT' }, good],
    ['a header that is not an object', ['HS256'], good],
    ['another issuer', HS256, { ...good, iss: 'someone-else' }],
    ['another audience', HS256, { ...good, aud: 'end-user' }],
    ['no audience', HS256, { ...good, aud: undefined }],
    ['no expiry', HS256, { ...good, exp: undefined }],
    ['an expiry that is not a number', HS256, { ...good, exp: String(nowS + 60) }],
    ['an expiry reached this second', HS256, { ...good, exp: nowS }],
    ['a not-before still ahead', HS256, { ...good, nbf: nowS + 1 }],
    ['a not-before that is not a number', HS256, { ...good, nbf: 'now' }],
    ['an issued-at that is not a number', HS256, { ...good, iat: 'today' }],
    ['claims that are not an object', HS256, 'admin'],
    ['claims that are null', HS256, null],
  ])('refuses %s', (_case, header, claims) => {
    expect(claimsOf(header, claims)).toBeNull();
  });

  it('refuses segments that are not JSON', () => {
    const notJson = `${Buffer.from('{"alg":').toString('base64url')}.${segment(good)}.x`;
    expect(tokenClaims(notJson, 'back-office', NOW)).toBeNull();
    expect(tokenClaims(`${segment(HS256)}..x`, 'back-office', NOW)).toBeNull();
  });
});
