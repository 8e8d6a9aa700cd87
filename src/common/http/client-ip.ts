import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';

/**
 * The caller's IP as Fastify resolved it (honours TRUST_PROXY, ignores X-Forwarded-For otherwise), never
 * a forwarded value that is not an IP: Fastify hands on whatever text the header held at the position it
 * stopped trusting. Then the nearest valid hop before it counts, at worst the socket's own address, so
 * `not-an-ip` reaches no log, consent record or rate-limit key, and junk values buy no fresh budgets.
 */
export function clientIp(request: Pick<FastifyRequest, 'ip' | 'ips' | 'socket'>): string {
  const ip = request.ip;
  if (isIP(ip) !== 0) return ip;
  // From the socket outwards, up to the first untrusted hop (the invalid one, last).
  const hops = request.ips ?? [];
  for (let i = hops.length - 2; i >= 0; i -= 1) if (isIP(hops[i]) !== 0) return hops[i];
  return request.socket?.remoteAddress ?? '';
}
