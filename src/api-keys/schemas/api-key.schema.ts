import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * A secret API key of one app. The clear value is never stored: `keyHash` (SHA-256) finds the key on each
 * request, `encryptedKey` (AES-256-GCM) lets an admin read the value again, as the API contract requires.
 * Both are left out of queries unless asked for (`select: false`), so lists cannot leak them.
 */
@Schema({ collection: 'api_keys', timestamps: true })
export class ApiKey {
  _id: Types.ObjectId;

  @Prop({ required: true }) appId: string;
  @Prop({ required: true, trim: true, minlength: 1 }) name: string;
  @Prop() description?: string;
  @Prop({ type: [String], default: [] }) allowedOrigins: string[];
  @Prop({ default: true }) isActive: boolean;
  @Prop() lastUsed?: Date;
  @Prop() expiresAt?: Date;
  @Prop({ required: true }) createdBy: string;

  // Unique SHA-256 of the value: the one lookup of every X-API-Key request.
  @Prop({ required: true, unique: true, select: false }) keyHash: string;

  @Prop({ required: true, select: false }) encryptedKey: string;

  createdAt: Date;
  updatedAt: Date;
}

export const ApiKeySchema = SchemaFactory.createForClass(ApiKey);

// GET /api-keys?appId=… (newest first by default), stats per app, and deleting an app's keys.
ApiKeySchema.index({ appId: 1, createdAt: -1, _id: -1 });
