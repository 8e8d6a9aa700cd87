import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
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
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) =>
        new LocalStorageDriver(join(config.get('DATA_DIR', { infer: true }), 'uploads')),
    },
  ],
  exports: [STORAGE_DRIVER],
})
export class StorageModule {}
