import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, Types } from 'mongoose';

export const APP_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

/** The apps' collection (the API-key lookup joins it). */
export const APPS_COLLECTION = 'apps';

/** Who an app's mail is from (docs/operations/sending-domains.md); MAIL_FROM when unset. */
export class AppSender {
  name?: string;
  email: string;
  replyTo?: string;
}

/** A client application. `id` is the app identifier (`appId`) used in paths and on tenant records. */
@Schema({ collection: APPS_COLLECTION, timestamps: true, minimize: false })
export class App {
  _id: Types.ObjectId;

  // Unique app identifier: serves every lookup by appId.
  @Prop({ required: true, unique: true, match: APP_ID_PATTERN }) id: string;

  @Prop({ required: true, minlength: 1, trim: true }) name: string;
  @Prop() description?: string;
  @Prop({ type: MongooseSchema.Types.Mixed, default: () => ({}) }) features: Record<string, unknown>;
  @Prop({ type: Map, of: String, default: () => ({}) }) chatChannels: Map<string, string>;
  @Prop({ type: [String], default: [] }) allowedOrigins: string[];

  // Unique publishable key: serves the X-App-Key lookup.
  @Prop({ required: true, unique: true }) publicKey: string;
  /**
   * The last keys rotate-key replaced (newest last, at most RETIRED_KEYS_KEPT), so a page still sending one
   * is told that its key was rotated (403) instead of being treated as a stranger (401). Never valid again.
   */
  @Prop({ type: [String], default: [] }) retiredPublicKeys: string[];

  @Prop({ default: true }) active: boolean;
  @Prop({ type: Object }) sender?: AppSender;

  createdAt: Date;
  updatedAt: Date;
}

export const AppSchema = SchemaFactory.createForClass(App);

/** How many replaced publishable keys an app remembers. */
export const RETIRED_KEYS_KEPT = 10;

// A refused X-App-Key: was it one of an app's replaced keys? (Read only when the current-key lookup fails.)
AppSchema.index({ retiredPublicKeys: 1 });
