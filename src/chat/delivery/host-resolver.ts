import { Injectable } from '@nestjs/common';
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';

/**
 * Host names to addresses, as the system resolver gives them (hosts file, then DNS). A provider of its own
 * so the address policy has one place to ask, and a test can map names (say `hooks.slack.com`) to a local
 * receiver.
 */
@Injectable()
export class HostResolver {
  lookupAll(hostname: string): Promise<LookupAddress[]> {
    return lookup(hostname, { all: true, verbatim: true });
  }
}
