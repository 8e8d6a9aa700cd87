import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { RetryLaterException } from '../../common/http/retry-later.exception';
import { UsersService } from '../../users/users.service';

/** Test copies a back-office user may send to addresses outside the staff, per window. */
export const OUTSIDE_TESTS_PER_WINDOW = 10;
export const OUTSIDE_TESTS_WINDOW_MS = 60 * 60_000;
const THROTTLER_NAME = 'campaign-test-outside';

/**
 * Who a campaign's test copy may go to (docs/decisions/security-template-cost-and-test-copies.md): any
 * active user of this service (the people who proof drafts) without a count; any other address within a
 * small budget per sending user, counted in the throttler's storage so it holds across instances once that
 * storage is shared (REDIS_URL). Without it `test` relays any HTML to any address.
 */
@Injectable()
export class CampaignTestRecipients {
  constructor(
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
    private readonly users: UsersService,
  ) {}

  /** Throws a 429 (with the seconds to wait) once `userId` has used its budget for outside addresses. */
  async admit(userId: string, email: string): Promise<void> {
    if (await this.users.isActiveUserAddress(email)) return;
    const { isBlocked, timeToBlockExpire } = await this.storage.increment(
      `${THROTTLER_NAME}:${userId}`,
      OUTSIDE_TESTS_WINDOW_MS,
      OUTSIDE_TESTS_PER_WINDOW,
      OUTSIDE_TESTS_WINDOW_MS,
      THROTTLER_NAME,
    );
    if (isBlocked) {
      const seconds = Math.max(1, timeToBlockExpire);
      throw new RetryLaterException(
        `At most ${OUTSIDE_TESTS_PER_WINDOW} test e-mails per hour to addresses that are not users of this ` +
          `service; try again in ${seconds} s, or send it to a user's address`,
        seconds,
      );
    }
  }
}
