import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import passport from 'passport';
import { SecretKeys } from '../../config/secret-keys';
import { jwtOptions, TOKEN_ISSUER } from '../jwt-options';
import { BACK_OFFICE_AUDIENCE } from '../token.service';
import { EndUserTokenService } from './end-user-token.service';
import { EndUserStrategy } from './end-user.strategy';

const keys = new SecretKeys('end-user-spec-secret-that-is-long-enough-to-use');
const tokens = new EndUserTokenService(
  new JwtService(jwtOptions(new ConfigService({ JWT_EXPIRES_IN: '15m' }))),
  keys,
);
const jwt = new JwtService();
const person = { id: '665f1c0a9d3e4b2a1c0d9e8f', email: 'ada@example.com', appId: 'shop' };

interface Outcome {
  error?: unknown;
  caller?: unknown;
}

/** Runs the registered `end-user` strategy through Passport, as the global guard does. */
function authenticate(
  authorization: string | undefined,
  params: Record<string, string> = {},
): Promise<Outcome> {
  const request = { headers: authorization ? { authorization } : {}, params };
  return new Promise((resolve) => {
    const middleware = passport.authenticate(
      'end-user',
      { session: false },
      (error: unknown, caller: unknown) => resolve({ error, caller }),
    ) as (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
    middleware(request, {}, (error) => resolve({ error }));
  });
}

describe('EndUserStrategy', () => {
  beforeAll(() => new EndUserStrategy(keys));

  it('accepts a token from EndUserTokenService and yields the person and app', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person)}`);
    expect(outcome).toEqual({ error: null, caller: person });
  });

  it('signs HS256 tokens for the end-user audience with the configured lifetime', async () => {
    const token = await tokens.sign(person);
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as { alg: string };
    const claims = jwt.decode<Record<string, unknown>>(token);
    expect(header.alg).toBe('HS256');
    expect(claims).toMatchObject({ iss: TOKEN_ISSUER, aud: 'end-user', sub: person.id, appId: 'shop' });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(15 * 60);
  });

  it('accepts the token on a route of its own app', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person)}`, { appId: 'shop' });
    expect(outcome.caller).toEqual(person);
  });

  it('refuses the token on a route of another app (403)', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person)}`, { appId: 'blog' });
    expect(outcome.error).toBeInstanceOf(ForbiddenException);
  });

  it('refuses a back-office token, even one signed with the end-user key', async () => {
    const backOffice = await jwt.signAsync(
      { email: person.email, appId: person.appId },
      {
        privateKey: keys.endUserJwt,
        issuer: TOKEN_ISSUER,
        audience: BACK_OFFICE_AUDIENCE,
        subject: person.id,
      },
    );
    expect((await authenticate(`Bearer ${backOffice}`)).caller).toBe(false);
  });

  it('refuses an end-user token signed with the back-office key', async () => {
    const forged = await jwt.signAsync(
      { email: person.email, appId: person.appId },
      { privateKey: keys.jwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${forged}`)).caller).toBe(false);
  });

  it('refuses an expired token, one without appId and one without exp', async () => {
    const expired = await jwt.signAsync(
      { email: person.email, appId: person.appId, exp: Math.floor(Date.now() / 1000) - 5 },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${expired}`)).caller).toBe(false);
    const withoutApp = await jwt.signAsync(
      { email: person.email },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${withoutApp}`)).error).toBeDefined();
    const withoutExpiry = await jwt.signAsync(
      { email: person.email, appId: person.appId },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${withoutExpiry}`)).error).toBeInstanceOf(UnauthorizedException);
  });

  it('fails without a token', async () => {
    expect((await authenticate(undefined)).caller).toBe(false);
  });
});
