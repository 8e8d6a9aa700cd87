import { SetMetadata } from '@nestjs/common';

export const JOB_HANDLER = Symbol('JOB_HANDLER');

/** Where a handler sits: a queue kind's job type (`job`), or a family of sub-handlers a kind looks up. */
export interface JobHandlerMeta {
  family: string;
  name: string;
}

/**
 * Marks a provider method as the handler of `name` (e.g. `@JobHandler('email.send')`). The engine finds
 * handlers at boot (`JobHandlers`) and refuses to start when a kind's job type has none, or a handler names
 * a type no kind declares. Other families (`family`) are lookups a kind's handlers make by name (batch
 * planners, message composers); a name may have one handler per family.
 */
export const JobHandler = (name: string, family = 'job') =>
  SetMetadata<symbol, JobHandlerMeta>(JOB_HANDLER, { family, name });
