import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';

/** `'true'` and `'false'` as booleans; any other value is passed on unchanged for IsBoolean to refuse. */
export function parseBooleanQuery(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/**
 * An optional boolean query parameter. A query string carries text, so exactly `true` and `false` are
 * accepted and the handler gets a real boolean; anything else (`yes`, `1`, `True`, the parameter twice)
 * is a 400 naming the field. OpenAPI documents it as a boolean.
 */
export function BooleanQuery(description?: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: Boolean, description }),
    IsOptional(),
    Transform(({ value }) => parseBooleanQuery(value)),
    IsBoolean({ message: '$property must be true or false' }),
  );
}
