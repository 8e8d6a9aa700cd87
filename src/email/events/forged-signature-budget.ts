import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';

/** Failed signature checks one client IP may make per window before it is answered 429. */
export const FORGED_SIGNATURES_PER_WINDOW = 10;
export const FORGED_SIGNATURE_WINDOW_MS = 60_000;
const THROTTLER_NAME = 'webhook-forged-signature';

/**
 * How many requests with a missing or wrong webhook signature one client IP may send, counted in the
 * throttler's storage (Redis when REDIS_URL is set), so the count holds across instances. Only failures
 * are counted: the provider's valid deliveries never touch it, and one is accepted even from an IP that is
 * over its budget (docs/decisions/security-edges.md).
 */
@Injectable()
export class ForgedSignatureBudget {
  constructor(@Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage) {}

  /** Counts one failed check; the seconds to wait once the IP is over its budget, else null. */
  async charge(clientIp: string): Promise<number | null> {
    const { isBlocked, timeToBlockExpire } = await this.storage.increment(
      `${THROTTLER_NAME}:${clientIp}`,
      FORGED_SIGNATURE_WINDOW_MS,
      FORGED_SIGNATURES_PER_WINDOW,
      FORGED_SIGNATURE_WINDOW_MS,
      THROTTLER_NAME,
    );
    return isBlocked ? Math.max(1, timeToBlockExpire) : null;
  }
}
