import { BlockList, isIP } from 'node:net';

/** Names proxy-addr (Fastify's `trustProxy`) takes for well-known ranges: private, never the internet. */
export const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * What production trusts at most (docs/operations/configuration.md "TRUST_PROXY"): the load balancer's
 * addresses, each range no wider than an IPv4 /8 or an IPv6 /32 (a provider's whole allocation) and all of
 * them together no more than two such ranges (room for 10.0.0.0/8 plus 172.16.0.0/12 and 192.168.0.0/16),
 * or up to three hops. Anything wider is `true` by another name: `0.0.0.0/1,128.0.0.0/1` or a count of 99 let
 * any client name its own IP.
 */
const WIDEST_IPV4_PREFIX = 8;
const WIDEST_IPV6_PREFIX = 32;
const MOST_WIDEST_RANGES = 2n;
const MAX_HOPS = 3;

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`): proxy-addr matches IPv4 clients against such ranges. */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** An IP or CIDR entry as the IPv4 or IPv6 range it trusts, with its prefix length. */
function rangeOf(entry: string): { v4: boolean; prefix: number } {
  const [address, prefix] = entry.split('/');
  const v4 = isIP(address) === 4;
  const bits = prefix === undefined ? (v4 ? 32 : 128) : Number(prefix);
  if (!v4 && bits >= 96 && IPV4_MAPPED.check(address, 'ipv6')) return { v4: true, prefix: bits - 96 };
  return { v4, prefix: bits };
}

/**
 * Why a valid TRUST_PROXY value trusts too much for production, or null. The line names the variable and
 * what to give instead.
 */
export function trustProxyProductionProblem(value: string): string | null {
  const problem = (what: string) =>
    `  TRUST_PROXY: ${what} trusts the X-Forwarded-For of too many clients (one picks its own IP for rate ` +
    "limits and consent records); when NODE_ENV=production give the load balancer's IPs/CIDRs (" +
    `each no wider than /${WIDEST_IPV4_PREFIX} for IPv4, /${WIDEST_IPV6_PREFIX} for IPv6, ` +
    'together at most two such ranges; or loopback, ' +
    `linklocal, uniquelocal) or its hop count (1 to ${MAX_HOPS})`;
  if (value === 'true') return problem('true');
  if (/^\d+$/.test(value)) return Number(value) <= MAX_HOPS ? null : problem(`a hop count of ${value}`);
  let v4 = 0n;
  let v6 = 0n;
  for (const entry of value.split(',').map((item) => item.trim())) {
    if (PROXY_RANGE_NAMES.has(entry)) continue;
    const range = rangeOf(entry);
    const widest = range.v4 ? WIDEST_IPV4_PREFIX : WIDEST_IPV6_PREFIX;
    if (range.prefix < widest) return problem(entry);
    if (range.v4) v4 += 2n ** BigInt(32 - range.prefix);
    else v6 += 2n ** BigInt(128 - range.prefix);
  }
  const tooMany =
    v4 > MOST_WIDEST_RANGES * 2n ** BigInt(32 - WIDEST_IPV4_PREFIX) ||
    v6 > MOST_WIDEST_RANGES * 2n ** BigInt(128 - WIDEST_IPV6_PREFIX);
  return tooMany ? problem(`${value.split(',').length} ranges that`) : null;
}
