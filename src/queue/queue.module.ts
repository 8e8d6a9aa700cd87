import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobHandlers } from './job-handlers';

/** The lease-queue engine's shared part: the handler registry every queue kind looks up. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [JobHandlers],
  exports: [JobHandlers],
})
export class QueueModule {}
