/**
 * The audit catalogue: every state-changing staff route, by its OpenAPI operationId, with the action its
 * records carry. test/audit-routes.e2e-spec.ts walks the route table: a new bearer route that writes (any
 * method but GET) fails there until it is named here or in NOT_AUDITED with a reason.
 */
/** Where `@ApiOperation()` keeps its options (@nestjs/swagger's DECORATORS.API_OPERATION, not exported). */
export const API_OPERATION_METADATA = 'swagger/apiOperation';

/** The operationId `@ApiOperation()` gave a handler. */
export function operationIdOf(handler: object): string | undefined {
  const operation = Reflect.getMetadata(API_OPERATION_METADATA, handler) as { operationId?: string } | undefined;
  return operation?.operationId;
}

export interface AuditSpec {
  /** `<target>.<verb>`: what the records of this route say happened. */
  action: string;
  /** The kind of thing changed (`apiKey`, `contact`…). */
  target: string;
  /** The path parameter with the target's id (default `id`); a create records the id it answered. */
  idParam?: string;
  /** The path parameter naming the app (default `appId`). */
  appParam?: string;
}

export const AUDITED: Record<string, AuditSpec> = {};

/** Writing routes that change nothing a reviewer needs to see, and why. */
export const NOT_AUDITED: Record<string, string> = {};
