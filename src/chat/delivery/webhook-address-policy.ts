import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { AppConfig } from '../../config/env';
import { PermanentJobError } from '../../queue/retry-policy';
import { HostResolver } from './host-resolver';
import { isPublicAddress } from './public-address';

/** A destination that production refuses: no retry changes it, so the notification is dead at once. */
export class DestinationRefusedError extends PermanentJobError {}

/** The host of a URL as a resolver or an address check takes it (`[::1]` → `::1`). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Where webhooks may go. In production (`NODE_ENV=production`) only to public addresses: a URL whose host
 * is, or resolves to, a loopback, private, link-local or otherwise special address is refused when a rule
 * or the default is set, and again when sending, on the addresses the connection is then made to (so a
 * name that resolved to a public address at creation and to an internal one later, DNS rebinding, is
 * refused too). In development and tests every address is allowed, for local receivers.
 */
@Injectable()
export class WebhookAddressPolicy {
  readonly publicOnly: boolean;

  constructor(
    config: ConfigService<AppConfig, true>,
    private readonly resolver: HostResolver,
  ) {
    this.publicOnly = config.get('NODE_ENV', { infer: true }) === 'production';
  }

  /**
   * Why `url` may not be a destination, or null when it may (always null outside production).
   * `unresolved`: its host has no address now.
   */
  async refusal(url: URL): Promise<{ reason: string; unresolved: boolean } | null> {
    if (!this.publicOnly) return null;
    const host = hostOf(url);
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = (await this.resolver.lookupAll(host)).map((entry) => entry.address);
      } catch {
        return { reason: `its host ${host} does not resolve`, unresolved: true };
      }
    }
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused === undefined) return null;
    return {
      reason:
        refused === host
          ? `${host} is not a public address`
          : `its host ${host} resolves to ${refused}, which is not a public address`,
      unresolved: false,
    };
  }

  /**
   * Before connecting to an IP literal (which a socket reaches without a lookup): refused when it is not
   * public in production.
   */
  checkLiteral(host: string): void {
    if (this.publicOnly && !isPublicAddress(host)) {
      throw new DestinationRefusedError(`Refused: ${host} is not a public address`);
    }
  }

  /**
   * The `lookup` of outgoing webhook requests: resolves the host and, in production, refuses it when any
   * of its addresses is not public. The socket connects to the addresses returned here, the ones checked.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.checkedAddresses(hostname, options.family).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };

  private async checkedAddresses(hostname: string, family: unknown): Promise<LookupAddress[]> {
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    const addresses = (await this.resolver.lookupAll(hostname)).filter(
      (entry) => wanted === 0 || entry.family === wanted,
    );
    const refused = this.publicOnly && addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) {
      throw new DestinationRefusedError(
        `Refused: ${hostname} resolves to ${refused.address}, not a public address`,
      );
    }
    if (addresses.length === 0) {
      throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    }
    return addresses;
  }
}
