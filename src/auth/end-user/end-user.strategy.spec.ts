import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import type { FastifyRequest } from 'fastify';
import { CredentialChecks } from '../../common/auth/credential-checks';
import { SecretKeys } from '../../config/secret-keys';
import type { ContactsService, TokenSubject } from '../../contacts/contacts.service';
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
const person = { id: '665f1c0a9d3e4b2a1c0d9e8f', appId: 'shop' };
/** The person records the strategy reads, by id (the e2e tests read the real collection). */
const records = new Map<string, Partial<TokenSubject>>();
const contacts = {
  findTokenSubject: (id: string) => Promise.resolve(records.get(id) ?? null),
} as unknown as ContactsService;

interface Outcome {
  error?: unknown;
  caller?: unknown;
}

const checks = new CredentialChecks();

/** Runs the registered `end-user` check, as the global guard does. */
async function authenticate(
  authorization: string | undefined,
  params: Record<string, string> = {},
): Promise<Outcome> {
  const request = { headers: authorization ? { authorization } : {}, params } as unknown as FastifyRequest;
  try {
    return { caller: await checks.verify('end-user', request) };
  } catch (error) {
    return { error };
  }
}

describe('EndUserStrategy', () => {
  beforeAll(() => new EndUserStrategy(keys, contacts, checks));
  beforeEach(() => {
    records.clear();
    records.set(person.id, { tokenVersion: 0, deletedAt: null });
  });

  it('accepts a token from EndUserTokenService and yields the person and app', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person, 0)}`);
    expect(outcome).toEqual({ caller: person });
  });

  it('signs HS256 tokens for the end-user audience with the configured lifetime', async () => {
    const token = await tokens.sign(person, 0);
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as { alg: string };
    const claims = jwt.decode<Record<string, unknown>>(token);
    expect(header.alg).toBe('HS256');
    expect(claims).toMatchObject({ iss: TOKEN_ISSUER, aud: 'end-user', sub: person.id, appId: 'shop' });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(15 * 60);
  });

  it('accepts the token on a route of its own app', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person, 0)}`, { appId: 'shop' });
    expect(outcome.caller).toEqual(person);
  });

  it('refuses the token on a route of another app (403)', async () => {
    const outcome = await authenticate(`Bearer ${await tokens.sign(person, 0)}`, { appId: 'blog' });
    expect(outcome.error).toBeInstanceOf(ForbiddenException);
  });

  it('refuses a back-office token, even one signed with the end-user key', async () => {
    const backOffice = await jwt.signAsync(
      { appId: person.appId, tv: 0 },
      {
        privateKey: keys.endUserJwt,
        issuer: TOKEN_ISSUER,
        audience: BACK_OFFICE_AUDIENCE,
        subject: person.id,
      },
    );
    expect((await authenticate(`Bearer ${backOffice}`)).error).toBeInstanceOf(UnauthorizedException);
  });

  it('refuses an end-user token signed with the back-office key', async () => {
    const forged = await jwt.signAsync(
      { appId: person.appId, tv: 0 },
      { privateKey: keys.jwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${forged}`)).error).toBeInstanceOf(UnauthorizedException);
  });

  it('refuses an expired token, one without appId and one without exp', async () => {
    const expired = await jwt.signAsync(
      { appId: person.appId, tv: 0, exp: Math.floor(Date.now() / 1000) - 5 },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${expired}`)).error).toBeInstanceOf(UnauthorizedException);
    const withoutApp = await jwt.signAsync(
      { tv: 0 },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${withoutApp}`)).error).toBeDefined();
    const withoutExpiry = await jwt.signAsync(
      { appId: person.appId, tv: 0 },
      { privateKey: keys.endUserJwt, issuer: TOKEN_ISSUER, audience: 'end-user', subject: person.id },
    );
    expect((await authenticate(`Bearer ${withoutExpiry}`)).error).toBeInstanceOf(UnauthorizedException);
  });

  it('refuses a token whose person is unknown, erased or at another token version (401)', async () => {
    const token = await tokens.sign(person, 0);
    records.delete(person.id);
    expect((await authenticate(`Bearer ${token}`)).error).toBeInstanceOf(UnauthorizedException);
    records.set(person.id, { tokenVersion: 0, deletedAt: new Date() });
    expect((await authenticate(`Bearer ${token}`)).error).toBeInstanceOf(UnauthorizedException);
    records.set(person.id, { tokenVersion: 1, deletedAt: null });
    expect((await authenticate(`Bearer ${token}`)).error).toBeInstanceOf(UnauthorizedException);
    expect((await authenticate(`Bearer ${await tokens.sign(person, 1)}`)).caller).toEqual(person);
  });

  it('reads a record without a token version as version 0', async () => {
    records.set(person.id, { deletedAt: null });
    expect((await authenticate(`Bearer ${await tokens.sign(person, 0)}`)).caller).toEqual(person);
  });

  it('fails without a token, saying it is missing', async () => {
    const { error } = await authenticate(undefined);
    expect(error).toBeInstanceOf(UnauthorizedException);
    expect((error as Error).message).toBe('Missing X-End-User-Token header');
  });
});
