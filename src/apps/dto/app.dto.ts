import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { App } from '../schemas/app.schema';

/**
 * The admin record of an app (the publishable key is not a secret: browsers send it). `_id` is the storage
 * id every record carries, declared because strict generated clients refuse an undeclared field; no route
 * takes it. Generators that camel-case `_id` and `id` into one name are given a name mapping for it
 * (docs/api/generated-clients.md). `id` is the app's identifier everywhere.
 */
/** Who the app's mail is from: campaigns, templates without a sender, confirmations, sign-in links. */
export class AppSenderView {
  @ApiPropertyOptional({ example: 'Lumen Club' }) name?: string;
  @ApiProperty({ example: 'club@lumen.example' }) email: string;
  @ApiPropertyOptional({ example: 'help@lumen.example' }) replyTo?: string;
}

@ApiSchema({ description: 'An app record; `id` is the identifier every route takes' })
export class AppView {
  @ApiProperty({
    description: 'The storage id of the record; routes take `id`',
    example: '665f1a2b3c4d5e6f7a8b9c0e',
  })
  _id: string;
  @ApiProperty({ example: 'my-shop' }) id: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) features: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) chatChannels: Record<
    string,
    string
  >;
  @ApiProperty({ type: [String] }) allowedOrigins: string[];
  @ApiProperty({ example: 'pk_3f9c…' }) publicKey: string;
  @ApiProperty() active: boolean;
  @ApiPropertyOptional({ type: AppSenderView, description: 'Unset: the mail of the app is from MAIL_FROM' })
  sender?: AppSenderView;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class AppFeaturesView {
  @ApiProperty() canEditTemplates: boolean;
  @ApiProperty() canEditUsers: boolean;
  @ApiProperty() canViewMetrics: boolean;
}

/** What any signed-in user sees of an active app. */
export class PublicAppView {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() features: AppFeaturesView;
}

export class AppPublicKeyView {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'pk_3f9c…' }) publicKey: string;
}

/** Lean reads give `chatChannels` as a plain object; documents built in memory give a Map. */
const plainMap = (value: Map<string, string> | Record<string, string> | undefined): Record<string, string> =>
  value instanceof Map ? Object.fromEntries(value) : { ...(value ?? {}) };

export function toAppView(app: App): AppView {
  return {
    _id: String(app._id),
    id: app.id,
    name: app.name,
    description: app.description,
    features: app.features ?? {},
    chatChannels: plainMap(app.chatChannels),
    allowedOrigins: app.allowedOrigins ?? [],
    publicKey: app.publicKey,
    active: app.active,
    ...(app.sender ? { sender: app.sender } : {}),
    createdAt: app.createdAt,
    updatedAt: app.updatedAt,
  };
}

export function toPublicAppView(app: App): PublicAppView {
  const flag = (name: string) => app.features?.[name] === true;
  return {
    id: app.id,
    name: app.name,
    features: {
      canEditTemplates: flag('canEditTemplates'),
      canEditUsers: flag('canEditUsers'),
      canViewMetrics: flag('canViewMetrics'),
    },
  };
}
