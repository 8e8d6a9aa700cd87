import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { type HydratedDocument, Schema as MongooseSchema, Types } from 'mongoose';

export const APP_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

/** A client application. `id` is the app identifier (`appId`) used in paths and on tenant records. */
@Schema({ collection: 'apps', timestamps: true, minimize: false })
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

  @Prop({ default: true }) active: boolean;

  createdAt: Date;
  updatedAt: Date;
}

export type AppDocument = HydratedDocument<App>;
export const AppSchema = SchemaFactory.createForClass(App);

// GET /apps and GET /admin/apps?activeOnly=true: active apps by name.
AppSchema.index({ active: 1, name: 1 });
