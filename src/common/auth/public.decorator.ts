import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:public';

/** Marks a route that needs no credential (the global guard denies everything else by default). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
