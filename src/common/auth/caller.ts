import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { CALLER_PROPERTY, type Credential } from './auth-policy';

/**
 * A parameter decorator that hands the handler what the credential's strategy verified. Using it on a route
 * of another credential is a programming error, reported as such (a 500 with an errorId, never a pass).
 */
export function callerDecorator(credential: Credential, decoratorName: string) {
  return createParamDecorator((_data: unknown, context: ExecutionContext): unknown => {
    const request = context.switchToHttp().getRequest<Record<string, unknown>>();
    const caller = request[CALLER_PROPERTY[credential]];
    if (caller === undefined || caller === null) {
      throw new Error(`${decoratorName} used on a route that is not authenticated by ${credential}`);
    }
    return caller;
  });
}
