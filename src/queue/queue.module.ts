import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { JobHandlers } from './job-handlers';
import { QueueWorker, QueueWorkerSchema } from './schemas/queue-worker.schema';
import { WorkerHeartbeat } from './worker-heartbeat';

/**
 * The lease-queue engine's shared part: the handler registry every queue kind looks up, and the process's
 * heartbeat its leases carry.
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    MongooseModule.forFeature([{ name: QueueWorker.name, schema: QueueWorkerSchema }]),
  ],
  providers: [JobHandlers, WorkerHeartbeat],
  exports: [JobHandlers, WorkerHeartbeat],
})
export class QueueModule {}
