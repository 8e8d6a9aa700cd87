import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** At most this many digits: every bound used here fits, and nothing reaches Number's imprecise range. */
const DECIMAL_INTEGER = /^(0|[1-9]\d{0,8})$/;

/**
 * Plain decimal digits as a number; anything else (`0x10`, `1e3`, ` 7`, `1.0`, `-1`, the parameter twice)
 * is passed on unchanged for IsInt to refuse, where `Number()` would have read `0x10` as 16.
 */
export function parseIntegerQuery(value: unknown): unknown {
  return typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : value;
}

/** An optional integer query parameter within `[min, max]`; out of range or not decimal digits → 400. */
export function IntegerQuery(options: { min: number; max: number; default: number; description?: string }) {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: options.min,
      maximum: options.max,
      default: options.default,
      description: options.description,
    }),
    IsOptional(),
    Transform(({ value }) => parseIntegerQuery(value)),
    IsInt({ message: '$property must be an integer written in decimal digits' }),
    Min(options.min),
    Max(options.max),
  );
}
