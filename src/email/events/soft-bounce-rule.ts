import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import type { AppConfig } from '../../config/env';
import { SentMessageLookup } from '../jobs/sent-message-lookup';
import { SuppressionService } from '../suppression/suppression.service';
import { EmailEvent } from '../tracking/schemas/email-event.schema';

export const SOFT_BOUNCE_SOURCE = 'soft-bounce-rule';

/**
 * N soft bounces (SOFT_BOUNCE_LIMIT) among an address's last M messages (SOFT_BOUNCE_WINDOW) suppress it as
 * `soft_bounce` (broadcast mail stops) until a later delivery or a staff action lifts it
 * (docs/operations/email-delivery.md "Soft bounces"). Checked when a soft bounce is recorded: two reads,
 * the address's latest messages from the message ledger and their soft-bounce events.
 */
@Injectable()
export class SoftBounceRule {
  private readonly logger = new Logger(SoftBounceRule.name);
  private readonly limit: number;
  private readonly window: number;

  constructor(
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
    private readonly messages: SentMessageLookup,
    private readonly suppression: SuppressionService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.limit = config.get('SOFT_BOUNCE_LIMIT', { infer: true });
    this.window = config.get('SOFT_BOUNCE_WINDOW', { infer: true });
  }

  /** After a soft bounce to `to` was stored: true when the address is now suppressed. */
  async check(to: string, appId: string | null): Promise<boolean> {
    const latest = await this.messages.latestTo(to, this.window);
    if (latest.length < this.limit) return false;
    const found = await this.events
      .find(
        { messageId: trusted({ $in: latest }), type: 'bounced', bounceType: 'soft' },
        { messageId: 1, _id: 0 },
      )
      .lean<Pick<EmailEvent, 'messageId'>[]>()
      .exec();
    // One message may be reported soft-bounced twice (its last SMTP attempt, then a DSN): counted once.
    const softBounces = new Set(found.map((event) => event.messageId));
    if (softBounces.size < this.limit) return false;
    await this.suppression.suppress({ email: to, reason: 'soft_bounce', source: SOFT_BOUNCE_SOURCE, appId });
    this.logger.log(`${softBounces.size} soft bounces in the last ${latest.length} messages: suppressed`);
    return true;
  }
}
