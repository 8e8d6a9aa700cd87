import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { MagicLinkTokens } from './magic-link-tokens';

/** Links per address and app within the window: enough for "I did not get it, send again" twice. */
export const LINKS_PER_ADDRESS = 3;
export const ADDRESS_WINDOW_MS = 15 * 60_000;
const THROTTLER_NAME = 'magic-link-address';

/**
 * How many links one address may be sent for one app, counted in the throttler's storage (the same one the
 * per-IP limits use), so the count holds across instances once that storage is shared (REDIS_URL). It stops
 * a mailbox from being flooded from many IPs, which the per-IP limit alone does not.
 */
@Injectable()
export class MagicLinkAddressLimit {
  constructor(
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
    private readonly tokens: MagicLinkTokens,
  ) {}

  /** Counts one request for the address; false once the address has had its links for this window. */
  async allow(appId: string, email: string): Promise<boolean> {
    const key = `${THROTTLER_NAME}:${this.tokens.addressKey(appId, email)}`;
    // Blocked for a window once over the limit, as the route limits are (the guard's blockDuration = ttl).
    const { isBlocked } = await this.storage.increment(
      key,
      ADDRESS_WINDOW_MS,
      LINKS_PER_ADDRESS,
      ADDRESS_WINDOW_MS,
      THROTTLER_NAME,
    );
    return !isBlocked;
  }
}
