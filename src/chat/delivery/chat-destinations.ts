import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import type { ChatChannel } from '../chat-channels';
import { ChatRulesService } from '../chat-rules.service';
import { WebhookAddressPolicy } from './webhook-address-policy';

export type ChatDestination = { kind: 'rule' | 'default'; url: string } | { kind: 'log' };

/**
 * Where a notification goes (docs/architecture.md "Chat notifications"): the app's active rule for the
 * channel, else `CHAT_DEFAULT_WEBHOOK_URL`, else the service's log.
 */
@Injectable()
export class ChatDestinations implements OnModuleInit {
  private readonly logger = new Logger(ChatDestinations.name);
  private readonly defaultUrl?: string;

  constructor(
    config: ConfigService<AppConfig, true>,
    private readonly rules: ChatRulesService,
    private readonly policy: WebhookAddressPolicy,
  ) {
    this.defaultUrl = config.get('CHAT_DEFAULT_WEBHOOK_URL', { infer: true });
  }

  /**
   * In production a default that names a non-public address stops start-up. One whose host does not
   * resolve now is only a warning: DNS may be down for a moment, and each delivery checks again.
   */
  async onModuleInit(): Promise<void> {
    if (!this.defaultUrl) return;
    const refused = await this.policy.refusal(new URL(this.defaultUrl));
    if (!refused) return;
    if (refused.unresolved) {
      this.logger.warn(`CHAT_DEFAULT_WEBHOOK_URL: ${refused.reason}; deliveries will try again`);
      return;
    }
    throw new Error(`CHAT_DEFAULT_WEBHOOK_URL is refused: ${refused.reason}`);
  }

  async resolve(appId: string, channel: ChatChannel): Promise<ChatDestination> {
    const rule = await this.rules.activeRule(appId, channel);
    if (rule) return { kind: 'rule', url: rule.webhookUrl };
    if (this.defaultUrl) return { kind: 'default', url: this.defaultUrl };
    return { kind: 'log' };
  }
}
