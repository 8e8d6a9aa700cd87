import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * A campaign whose remaining messages are held (the complaint guard tripped). `_id` is the campaign id, so a
 * campaign is held once: the guard does not hold it again after an admin released it (`releasedAt`).
 */
@Schema({ collection: 'email_campaign_holds', versionKey: false })
export class CampaignHold {
  @Prop({ type: String }) _id: string;
  @Prop({ required: true }) reason: string;
  @Prop({ required: true }) heldAt: Date;
  @Prop({ type: Date, default: null }) releasedAt: Date | null;
}

export const CampaignHoldSchema = SchemaFactory.createForClass(CampaignHold);
