import { Resolver } from 'node:dns/promises';
import type { DnsRecord } from './dns-records';
import type { RecordState } from './schemas/sender-domain.schema';

/** Answers that mean "no such record" rather than "the resolver failed". */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN']);

/**
 * A resolver on DNS_SERVERS (`host:port`, comma-separated) or the system's: tests and staging point it at
 * a DNS server of their own. Lookups time out and retry little: a verify request waits on them.
 */
export function senderDnsResolver(servers: string[]): Resolver {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  if (servers.length > 0) resolver.setServers(servers);
  return resolver;
}

const normalise = (text: string) => text.replace(/\s+/g, '').replace(/\.$/, '').toLowerCase();

async function lookUp(resolver: Resolver, record: DnsRecord): Promise<string[] | 'missing'> {
  try {
    if (record.type === 'CNAME') return await resolver.resolveCname(record.name);
    return (await resolver.resolveTxt(record.name)).map((chunks) => chunks.join(''));
  } catch (error) {
    if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return 'missing';
    throw error;
  }
}

/**
 * What DNS holds for one record. SPF and DMARC pass with any record of their kind that names what the
 * service needs (an operator's SPF has other senders too); DKIM and CNAMEs must match exactly.
 */
export async function checkRecord(resolver: Resolver, record: DnsRecord): Promise<RecordState> {
  const found = await lookUp(resolver, record);
  if (found === 'missing' || found.length === 0) return 'missing';
  const want = normalise(record.value);
  const matches = (value: string) => {
    const got = normalise(value);
    if (record.purpose === 'spf')
      return got.startsWith('v=spf1') && got.includes(normalise(record.value.split(' ')[1]));
    if (record.purpose === 'dmarc') return got.startsWith('v=dmarc1');
    return got === want;
  };
  return found.some(matches) ? 'verified' : 'mismatch';
}
