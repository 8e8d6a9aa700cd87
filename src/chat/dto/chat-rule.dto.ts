import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { APP_ID_MAX_LENGTH } from '../../apps/dto/app-input.dto';
import { APP_ID_PATTERN } from '../../apps/schemas/app.schema';
import { IsHttpUrl } from '../../common/validation/http-url.decorator';
import { Omittable } from '../../common/validation/omittable.decorator';
import { CHAT_CHANNELS, type ChatChannel } from '../chat-channels';
import type { ChatRule } from '../schemas/chat-rule.schema';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

class AppIdField {
  @ApiProperty({ pattern: APP_ID_PATTERN.source, maxLength: APP_ID_MAX_LENGTH, example: 'my-shop' })
  @IsString()
  @Matches(APP_ID_PATTERN)
  @MaxLength(APP_ID_MAX_LENGTH)
  appId: string;
}

export class ListChatRulesQuery extends AppIdField {}

export class CreateChatRuleDto extends AppIdField {
  @ApiProperty({ enum: CHAT_CHANNELS, example: 'tickets' })
  @IsIn(CHAT_CHANNELS)
  channel: ChatChannel;

  @ApiProperty({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    example: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX',
    description:
      'http(s) URL of the webhook. Slack (hooks.slack.com) gets `{text}`, Discord (discord.com/api/webhooks) ' +
      '`{content}`, any other URL `{text, channel, appId, event, data}`. In production it must resolve to ' +
      'public addresses only.',
  })
  @IsHttpUrl()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  webhookUrl: string;
}

export class UpdateChatRuleDto {
  @ApiPropertyOptional({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    example: 'https://discord.com/api/webhooks/123/abc',
  })
  @Omittable()
  @IsHttpUrl()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  webhookUrl?: string;

  @ApiPropertyOptional({ description: 'false: the app uses the global default for this channel meanwhile' })
  @Omittable()
  @IsBoolean()
  active?: boolean;
}

export class ChatRuleView {
  @ApiProperty({ example: '65a1f0c2e4b0a1b2c3d4e5f6' }) _id: string;
  @ApiProperty({ example: 'my-shop' }) appId: string;
  @ApiProperty({ enum: CHAT_CHANNELS, example: 'tickets' }) channel: ChatChannel;
  @ApiProperty({ format: 'uri', example: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX' })
  webhookUrl: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: Date;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: Date;
}

export function toChatRuleView(rule: ChatRule): ChatRuleView {
  return {
    _id: String(rule._id),
    appId: rule.appId,
    channel: rule.channel,
    webhookUrl: rule.webhookUrl,
    active: rule.active,
    createdAt: rule.createdAt,
    updatedAt: rule.updatedAt,
  };
}
