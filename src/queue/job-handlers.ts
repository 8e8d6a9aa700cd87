import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_HANDLER, type JobHandlerMeta } from './job-handler.decorator';

/** A discovered handler, bound to its provider. */
export type HandlerFn = (...args: never[]) => Promise<unknown>;

/**
 * The handlers marked with `@JobHandler`, found once among every provider of the application (Nest's
 * DiscoveryService), by family and name. Two handlers for one name are a start-up error.
 */
@Injectable()
export class JobHandlers {
  private table: Map<string, Map<string, HandlerFn>> | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** The handler of `name` in `family`, if any (a job's data may name one that does not exist). */
  get<F extends HandlerFn>(family: string, name: string): F | undefined {
    return this.discovered().get(family)?.get(name) as F | undefined;
  }

  /** The names that have a handler in `family`. */
  names(family: string): string[] {
    return [...(this.discovered().get(family)?.keys() ?? [])];
  }

  /**
   * Refuses to start a queue kind whose job types and handlers disagree: a declared type without a
   * handler, or a handler for a type of this kind (`<kind>.` prefix) that the kind does not declare.
   */
  check(kind: string, types: readonly string[]): void {
    const handled = this.names('job');
    const missing = types.filter((type) => !handled.includes(type));
    if (missing.length > 0) {
      throw new Error(`Queue "${kind}": no @JobHandler for job type(s) ${missing.join(', ')}`);
    }
    const unknown = handled.filter((name) => name.startsWith(`${kind}.`) && !types.includes(name));
    if (unknown.length > 0) {
      throw new Error(`Queue "${kind}": @JobHandler for unknown job type(s) ${unknown.join(', ')}`);
    }
  }

  private discovered(): Map<string, Map<string, HandlerFn>> {
    if (this.table) return this.table;
    const table = new Map<string, Map<string, HandlerFn>>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || wrapper.isNotMetatype) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const meta = this.reflector.get<JobHandlerMeta | undefined>(JOB_HANDLER, fn as () => unknown);
        if (!meta) continue;
        const family = table.get(meta.family) ?? new Map<string, HandlerFn>();
        if (family.has(meta.name)) {
          throw new Error(`Two @JobHandler(${meta.family}) for "${meta.name}"`);
        }
        family.set(meta.name, (fn as HandlerFn).bind(instance));
        table.set(meta.family, family);
      }
    }
    this.table = table;
    return table;
  }
}
