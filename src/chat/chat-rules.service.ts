import { BadRequestException, ConflictException, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { APP_DELETED, type AppDeletedEvent } from '../apps/app-events';
import { AppsService } from '../apps/apps.service';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { findByIdOr404 } from '../common/database/object-id';
import type { ChatChannel } from './chat-channels';
import { WebhookAddressPolicy } from './delivery/webhook-address-policy';
import type { CreateChatRuleDto, UpdateChatRuleDto } from './dto/chat-rule.dto';
import { ChatRule } from './schemas/chat-rule.schema';

const NOT_FOUND = 'Chat routing rule not found';

/** The 409 of a second rule for an app and channel. */
export function duplicateRuleMessage(appId: string, channel: string): string {
  return `App ${appId} already has a rule for channel ${channel}; change it with PATCH`;
}

/** Per-app webhook overrides of chat channels. */
@Injectable()
export class ChatRulesService {
  constructor(
    @InjectModel(ChatRule.name) private readonly rules: Model<ChatRule>,
    private readonly apps: AppsService,
    private readonly policy: WebhookAddressPolicy,
  ) {}

  /** The app's rules by channel (none for an unknown app). */
  list(appId: string): Promise<ChatRule[]> {
    return this.rules.find({ appId }).sort({ channel: 1 }).lean<ChatRule[]>().exec();
  }

  /** A second rule for the same app and channel is a 409 (unique index), not a silent replacement. */
  async create(dto: CreateChatRuleDto): Promise<ChatRule> {
    await this.apps.requireApp(dto.appId);
    await this.checkDestination(dto.webhookUrl);
    try {
      const created = await this.rules.create({ ...dto, active: true });
      return created.toObject<ChatRule>();
    } catch (error) {
      if (isDuplicateKey(error)) {
        throw new ConflictException(duplicateRuleMessage(dto.appId, dto.channel));
      }
      throw error;
    }
  }

  async update(id: string, dto: UpdateChatRuleDto): Promise<ChatRule> {
    if (dto.webhookUrl !== undefined) await this.checkDestination(dto.webhookUrl);
    return findByIdOr404(id, NOT_FOUND, (_id) =>
      this.rules
        .findByIdAndUpdate(_id, { $set: dto }, { returnDocument: 'after', runValidators: true })
        .lean<ChatRule>()
        .exec(),
    );
  }

  /** Without its rule the app's channel goes to the global default again. */
  async remove(id: string): Promise<void> {
    await findByIdOr404(id, NOT_FOUND, (_id) => this.rules.findByIdAndDelete(_id).lean().exec());
  }

  /** The rule deliveries use: the app's rule for the channel, when it is active. */
  activeRule(appId: string, channel: ChatChannel): Promise<ChatRule | null> {
    return this.rules.findOne({ appId, channel, active: true }).lean<ChatRule>().exec();
  }

  /** A deleted app's webhooks are not inherited by a later app that reuses its id. */
  @OnEvent(APP_DELETED, { suppressErrors: false })
  async removeAppRules(event: AppDeletedEvent): Promise<void> {
    await this.rules.deleteMany({ appId: event.appId }).exec();
  }

  /** In production the URL must resolve to public addresses only (see WebhookAddressPolicy). */
  private async checkDestination(webhookUrl: string): Promise<void> {
    const refused = await this.policy.refusal(new URL(webhookUrl));
    if (refused) throw new BadRequestException(`webhookUrl is refused: ${refused.reason}`);
  }
}
