import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One process that runs queue workers, as its heartbeat keeps it (WorkerHeartbeat): `_id` is the process's
 * worker id, which every lease it takes carries (`workerId`), so a reaper tells a dead holder from a live
 * one without waiting out the lease.
 */
@Schema({ collection: 'queue_workers', versionKey: false })
export class QueueWorker {
  @Prop({ type: String }) _id: string;
  /** Host and process id, for an operator reading the collection. */
  @Prop({ required: true }) host: string;
  @Prop({ required: true }) pid: number;
  @Prop({ required: true }) startedAt: Date;
  /** Renewed every few seconds while the process runs; set to the stop time at a clean shutdown. */
  @Prop({ required: true }) aliveUntil: Date;
}

export const QueueWorkerSchema = SchemaFactory.createForClass(QueueWorker);
// A killed process's entry is removed a day after its last heartbeat (its leases were recovered long before).
QueueWorkerSchema.index({ aliveUntil: 1 }, { expireAfterSeconds: 86_400 });
