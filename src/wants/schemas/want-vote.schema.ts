import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';

/** One vote of one voter (end user id or client IP) on one want. */
export const WANT_VOTES_COLLECTION = 'want_votes';

@Schema({ collection: WANT_VOTES_COLLECTION, timestamps: { createdAt: true, updatedAt: false } })
export class WantVote {
  _id: Types.ObjectId;
  @Prop({ type: MongooseSchema.Types.ObjectId, required: true }) wantId: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true }) voterId: string;
  createdAt: Date;
}

export const WantVoteSchema = SchemaFactory.createForClass(WantVote);

// One vote per want and voter: the invariant that keeps voteCount exact under concurrent requests. It also
// serves every read and delete of a vote (the board's `$lookup`, a toggle), all by want and voter.
WantVoteSchema.index({ wantId: 1, voterId: 1 }, { unique: true });
