import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';

/**
 * One magic link: the HMAC of its token (never the token itself, so a copy of this collection signs nobody
 * in), the person and the app it signs into, and its lifetime. `usedAt` is set once, by the verify that
 * consumes it.
 */
@Schema({ collection: 'magic_link_tokens', timestamps: { createdAt: true, updatedAt: false } })
export class MagicLinkToken {
  _id: Types.ObjectId;
  /** HMAC-SHA256 (hex) of the token with the derived `magic-link` key. */
  @Prop({ required: true }) tokenHash: string;
  /** The person record (`contacts._id`) the link signs in. */
  @Prop({ type: MongooseSchema.Types.ObjectId, required: true }) contactId: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true }) expiresAt: Date;
  @Prop({ type: Date, default: null }) usedAt: Date | null;
  createdAt: Date;
}

export const MagicLinkTokenSchema = SchemaFactory.createForClass(MagicLinkToken);

// Verify: the atomic consume finds the link by its hash (equality on a unique key; a duplicate of 256
// random bits would be a broken random source, and the unique index refuses it rather than sharing it).
MagicLinkTokenSchema.index({ tokenHash: 1 }, { unique: true });
// TTL: MongoDB deletes each link once `expiresAt` has passed. An expired link can never sign in again, so
// keeping it would only pile up records naming a person and an app (personal data with no purpose left).
// The monitor runs about once a minute: verify checks `expiresAt` itself and never relies on the deletion.
MagicLinkTokenSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
