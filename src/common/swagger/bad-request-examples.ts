import { BadRequestException, type Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { type ValidationError, validateSync } from 'class-validator';
import { listOf } from '../http/all-exceptions.filter';
import { NothingToUpdatePipe } from '../validation/nothing-to-update.pipe';

/** The messages of a validation error and its children, as the global ValidationPipe lists them. */
function messagesOf(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => [
    ...Object.values(error.constraints ?? {}),
    ...messagesOf(error.children ?? []),
  ]);
}

/**
 * The 400 a body DTO really answers to the commonest mistake, an empty object: the missing required fields
 * as the global ValidationPipe words them (same rules, same joining); on a PATCH without required fields, the
 * NothingToUpdatePipe message of an empty update; else the refusal of an undeclared field. The document
 * shows it as the route's 400 example.
 */
export function emptyBodyMessage(dto: Type<unknown>, isPatch: boolean): string {
  const errors = validateSync(plainToInstance(dto, {}) as object, {
    whitelist: true,
    forbidNonWhitelisted: true,
  });
  if (errors.length > 0) return listOf(messagesOf(errors));
  if (isPatch) {
    try {
      new NothingToUpdatePipe().transform({}, { type: 'body', metatype: dto });
    } catch (error) {
      if (error instanceof BadRequestException) return error.message;
    }
  }
  return UNDECLARED_FIELD;
}

/** What the ValidationPipe answers to a body or query with a field the DTO does not declare, `extra`. */
export const UNDECLARED_FIELD = 'property extra should not exist';
