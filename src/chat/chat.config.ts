import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { IsHttpUrl } from '../common/validation/http-url.decorator';
import { emptyToUndefined, type EnvSection, IsCronExpression, toBool, toInt } from '../config/env-rules';

/** Chat notifications: where they go by default, the delivery worker, the daily digest. */
export class ChatEnv {
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsHttpUrl()
  CHAT_DEFAULT_WEBHOOK_URL?: string;

  /** Run the chat notification delivery (and the daily digest) in this process. */
  @Transform(toBool)
  @IsBoolean()
  CHAT_WORKER_ENABLED = true;

  /** How often the chat delivery polls the outbox. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  CHAT_WORKER_INTERVAL_MS = 2000;

  /** When the daily chat digest goes out (server time zone). */
  @IsCronExpression()
  CHAT_DIGEST_CRON = '0 8 * * *';

  /**
   * Days a delivered or dead chat notification is kept. At least 2: the daily digest counts the
   * notifications of the 24 hours before it runs.
   */
  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(3650)
  CHAT_NOTIFICATION_RETENTION_DAYS = 30;
}

export const chatEnv: EnvSection<ChatEnv> = { schema: ChatEnv };
