import { BlockList, isIP } from 'node:net';

/**
 * IPv4 ranges that are not public unicast (IANA's special-purpose registry). `BlockList` also matches the
 * IPv4-mapped IPv6 form (`::ffff:127.0.0.1`) against them.
 */
const NON_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services (169.254.169.254)
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

/**
 * IPv6: only global unicast (2000::/3) is public, less the parts of it that are special. Everything else
 * is refused, among it loopback `::1`, unspecified `::`, unique local fc00::/7, link-local fe80::/10,
 * multicast ff00::/8 and the NAT64 prefix 64:ff9b::/96 (which can reach private IPv4 addresses).
 */
const GLOBAL_UNICAST_V6: [string, number] = ['2000::', 3];
const NON_PUBLIC_V6: [string, number][] = [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which embeds any IPv4 address
  ['3fff::', 20], // documentation
];
const IPV4_MAPPED: [string, number] = ['::ffff:0:0', 96];

function blockList(ranges: [string, number][], type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, type);
  return list;
}

const nonPublicV4 = blockList(NON_PUBLIC_V4, 'ipv4');
const nonPublicV6 = blockList(NON_PUBLIC_V6, 'ipv6');
const globalUnicastV6 = blockList([GLOBAL_UNICAST_V6], 'ipv6');
const ipv4MappedV6 = blockList([IPV4_MAPPED], 'ipv6');

/**
 * Whether an IP address is a public unicast one, the only kind a webhook may be sent to in production.
 * Anything that is not an IP address (a host name, a scoped `fe80::1%eth0`) is not.
 */
export function isPublicAddress(address: string): boolean {
  if (address.includes('%')) return false;
  switch (isIP(address)) {
    case 4:
      return !nonPublicV4.check(address, 'ipv4');
    case 6:
      if (ipv4MappedV6.check(address, 'ipv6')) return !nonPublicV4.check(address, 'ipv6');
      return globalUnicastV6.check(address, 'ipv6') && !nonPublicV6.check(address, 'ipv6');
    default:
      return false;
  }
}
