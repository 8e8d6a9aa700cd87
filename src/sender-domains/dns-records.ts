import { dkimRecordValue } from './dkim-keys';
import type { RecordPurpose, SenderDomain } from './schemas/sender-domain.schema';

export interface DnsRecord {
  purpose: RecordPurpose;
  type: 'TXT' | 'CNAME';
  name: string;
  value: string;
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

/** The records an operator publishes for a domain (docs/operations/sending-domains.md). */
export function recordsOf(domain: Pick<SenderDomain, 'domain' | 'dkim'>, hosts: SendingHosts): DnsRecord[] {
  const name = domain.domain;
  return [
    {
      purpose: 'dkim',
      type: 'TXT',
      name: `${domain.dkim.selector}._domainkey.${name}`,
      value: dkimRecordValue(domain.dkim),
    },
    { purpose: 'spf', type: 'TXT', name, value: `v=spf1 ${hosts.spfInclude} ~all` },
    { purpose: 'dmarc', type: 'TXT', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none; adkim=r; aspf=r' },
    { purpose: 'return-path', type: 'CNAME', name: `${RETURN_PATH_LABEL}.${name}`, value: hosts.linkHost },
    { purpose: 'tracking', type: 'CNAME', name: `${TRACKING_LABEL}.${name}`, value: hosts.linkHost },
  ];
}
