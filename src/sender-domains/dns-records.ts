import { dkimRecordValue } from './dkim-keys';
import type { DkimKey, RecordPurpose, SenderDomain } from './schemas/sender-domain.schema';

export interface DnsRecord {
  purpose: RecordPurpose;
  type: 'TXT' | 'CNAME';
  name: string;
  value: string;
  /** DKIM records: the key that signs, a rotation's next key, or the key it replaced. */
  key?: 'signing' | 'next' | 'previous';
  /** The replaced key's record once its overlap is over: it may be deleted from DNS. */
  removable?: boolean;
}

/** Where the service's own hosts are: what the return-path and tracking names point to, and SPF. */
export interface SendingHosts {
  /** The host PUBLIC_BASE_URL names: link domains are CNAMEs to it. */
  linkHost: string;
  /** The SPF mechanism that authorises the service's outgoing servers (SENDING_SPF_INCLUDE). */
  spfInclude: string;
}

/** Sub-names of a sender domain (docs/operations/sending-domains.md). */
export const RETURN_PATH_LABEL = 'bounces';
export const TRACKING_LABEL = 'links';

const dkimRecord = (domain: string, key: DkimKey, role: DnsRecord['key']): DnsRecord => ({
  purpose: 'dkim',
  type: 'TXT',
  name: `${key.selector}._domainkey.${domain}`,
  value: dkimRecordValue(key),
  key: role,
});

/**
 * The records an operator publishes for a domain (docs/operations/sending-domains.md): during a rotation
 * the next key's record beside the signing one, and after it the replaced key's until its overlap is over.
 */
export function recordsOf(
  domain: Pick<SenderDomain, 'domain' | 'dkim' | 'nextDkim' | 'previousDkim'>,
  hosts: SendingHosts,
  now = new Date(),
): DnsRecord[] {
  const name = domain.domain;
  const previous = domain.previousDkim;
  return [
    dkimRecord(name, domain.dkim, 'signing'),
    ...(domain.nextDkim ? [dkimRecord(name, domain.nextDkim, 'next')] : []),
    { purpose: 'spf', type: 'TXT', name, value: `v=spf1 ${hosts.spfInclude} ~all` },
    { purpose: 'dmarc', type: 'TXT', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none; adkim=r; aspf=r' },
    { purpose: 'return-path', type: 'CNAME', name: `${RETURN_PATH_LABEL}.${name}`, value: hosts.linkHost },
    { purpose: 'tracking', type: 'CNAME', name: `${TRACKING_LABEL}.${name}`, value: hosts.linkHost },
    ...(previous
      ? [{ ...dkimRecord(name, previous, 'previous'), removable: previous.retiresAt <= now }]
      : []),
  ];
}
