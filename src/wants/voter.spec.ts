import { BadRequestException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { voterIdOf } from './voter';

const request = (headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  ({ headers, ip: '203.0.113.9', ...extra }) as unknown as FastifyRequest;
const endUser = { id: '665f1c0a9d3e4b2a1c0d9e8f', email: 'ada@example.com', appId: 'shop' };

describe('voterIdOf', () => {
  it('is the client IP without an end user', () => {
    expect(voterIdOf(request())).toBe('ip:203.0.113.9');
  });

  it('is the end user the app names in X-User-Id', () => {
    expect(voterIdOf(request({ 'x-user-id': 'u1' }))).toBe('user:u1');
  });

  it('is the person of a verified end-user token, which wins over X-User-Id', () => {
    expect(voterIdOf(request({}, { endUser }))).toBe(`person:${endUser.id}`);
    expect(voterIdOf(request({ 'x-user-id': 'u1' }, { endUser }))).toBe(`person:${endUser.id}`);
    // The header is not read then, so a malformed one does not matter either.
    expect(voterIdOf(request({ 'x-user-id': 'not valid!' }, { endUser }))).toBe(`person:${endUser.id}`);
  });

  it('keeps the kinds apart: an app user id that looks like a person id is still an app user id', () => {
    expect(voterIdOf(request({ 'x-user-id': `person:${endUser.id}` }))).toBe(`user:person:${endUser.id}`);
  });

  it('refuses a malformed X-User-Id', () => {
    expect(() => voterIdOf(request({ 'x-user-id': 'bad id' }))).toThrow(BadRequestException);
  });
});
