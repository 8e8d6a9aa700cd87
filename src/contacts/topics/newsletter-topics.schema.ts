import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** One newsletter topic of an app: a stable key campaigns and people's choices name, and its label. */
@Schema({ _id: false })
export class NewsletterTopic {
  @Prop({ required: true }) key: string;
  @Prop({ required: true }) name: string;
}
const NewsletterTopicSchema = SchemaFactory.createForClass(NewsletterTopic);

/** An app's newsletter topics, one document per app (`_id` is the app id: read by its primary key). */
@Schema({ collection: 'newsletter_topics', timestamps: true, versionKey: false })
export class NewsletterTopics {
  @Prop({ type: String }) _id: string;
  @Prop({ type: [NewsletterTopicSchema], default: [] }) topics: NewsletterTopic[];
  updatedAt: Date;
}

export const NewsletterTopicsSchema = SchemaFactory.createForClass(NewsletterTopics);
