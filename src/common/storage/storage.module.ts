import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { Env } from '../../config/env';
import { LocalStorageDriver } from './local-storage.driver';
import { STORAGE_DRIVER } from './storage-driver';

/**
 * Provides the `StorageDriver` for uploads: a local directory under `DATA_DIR/uploads`. An S3-compatible
 * driver implements the same interface and is chosen here once its configuration exists.
 */
@Module({
  providers: [
    {
      provide: STORAGE_DRIVER,
      inject: [Env],
      useFactory: (env: Env) => new LocalStorageDriver(join(env.DATA_DIR, 'uploads')),
    },
  ],
  exports: [STORAGE_DRIVER],
})
export class StorageModule {}
