import { SetMetadata } from '@nestjs/common';
import type { JobHandlerFn } from './job-context';
import type { JobTypeOf, KindTypes, QueueKind } from './queue-kind';

export const JOB_HANDLER = Symbol('JOB_HANDLER');

/** Where a handler sits: a queue kind's job type (`job`), or a family of sub-handlers a kind looks up. */
export interface JobHandlerMeta {
  family: string;
  name: string;
}

/** A method decorator that accepts only methods of type `Fn` (checked by the compiler). */
type TypedMethodDecorator<Fn> = <M extends Fn>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a provider method as the handler of a kind's job type (`@JobHandler(EMAIL_KIND, 'email.send')`):
 * the method's job parameter must take that type's payload (the kind's payload map) and return the kind's
 * outcome, or the build fails. The engine finds handlers at boot (`JobHandlers`) and refuses to start when a
 * declared type has none. With a family instead of a kind (`@JobHandler(name, family)`): a lookup a kind's
 * handlers make by name (batch planners, message composers); a name may have one handler per family.
 */
export function JobHandler<T extends KindTypes, Type extends JobTypeOf<T>>(
  kind: QueueKind<T>,
  type: Type,
): TypedMethodDecorator<JobHandlerFn<T, Type>>;
export function JobHandler(name: string, family: string): MethodDecorator;
export function JobHandler(target: string | { name: string }, second: string): MethodDecorator {
  const meta: JobHandlerMeta =
    typeof target === 'string' ? { family: second, name: target } : { family: 'job', name: second };
  return SetMetadata<symbol, JobHandlerMeta>(JOB_HANDLER, meta);
}
