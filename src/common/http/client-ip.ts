import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';

type AddressedRequest = Pick<FastifyRequest, 'ip' | 'ips' | 'socket'>;

/**
 * Each request's answer, once worked out: Fastify recomputes `request.ip` on every read (the forwarded
 * chain parsed and each hop tested against TRUST_PROXY), and the throttler and the access line both ask.
 */
const resolvedIps = new WeakMap<AddressedRequest, string>();

/**
 * The caller's IP as Fastify resolved it (honours TRUST_PROXY, ignores X-Forwarded-For otherwise), never
 * a forwarded value that is not an IP: Fastify hands on whatever text the header held at the position it
 * stopped trusting. Then the nearest valid hop before it counts, at worst the socket's own address, so
 * `not-an-ip` reaches no log, consent record or rate-limit key, and junk values buy no fresh budgets.
 */
export function clientIp(request: AddressedRequest): string {
  let ip = resolvedIps.get(request);
  if (ip === undefined) {
    ip = resolveClientIp(request);
    resolvedIps.set(request, ip);
  }
  return ip;
}

function resolveClientIp(request: AddressedRequest): string {
  const ips = request.ips ?? [];
  const ip = ips.length > 0 ? ips[ips.length - 1] : request.ip;
  if (isIP(ip) !== 0) return ip;
  // From the socket outwards, up to the first untrusted hop (the invalid one, last).
  for (let i = ips.length - 2; i >= 0; i -= 1) if (isIP(ips[i]) !== 0) return ips[i];
  return request.socket?.remoteAddress ?? '';
}
