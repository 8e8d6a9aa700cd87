import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { isOriginPattern } from '../auth/origin-match';

export const MAX_ALLOWED_ORIGINS = 50;

/** A DNS name as a wildcard entry may follow `*.` with (letters and digits, inner hyphens, dots). */
const DOMAIN = '([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\\.)*[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?';
/**
 * The entries the OpenAPI document promises to take: `*`, `*.domain` or `scheme://*.domain` (an optional
 * port), or an origin `http(s)://host[:port]`. The validator (isOriginPattern) takes these and a little
 * more (an origin written with a path, compared by its origin): a client following the pattern is never
 * refused.
 */
export const ORIGIN_ENTRY_PATTERN =
  `^(\\*|(https?://)?\\*\\.${DOMAIN}(:[0-9]{1,5})?` +
  '|https?://([^\\s/*?#@:\\[\\]]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/?)$';

/** An optional `allowedOrigins` list: each entry a full URL, `*.domain`, `https://*.domain` or `*`. */
export function AllowedOriginsProperty(description: string) {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'array',
      items: { type: 'string', maxLength: 255, pattern: ORIGIN_ENTRY_PATTERN },
      maxItems: MAX_ALLOWED_ORIGINS,
      description,
      example: ['https://shop.example.com', '*.example.com'],
    }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_ALLOWED_ORIGINS),
    IsString({ each: true }),
    MaxLength(255, { each: true }),
    ValidateBy(
      {
        name: 'isOriginPattern',
        validator: {
          validate: (value: unknown) => typeof value === 'string' && isOriginPattern(value),
          defaultMessage: () =>
            'each value in $property must be a full URL (https://host[:port]), *.domain, https://*.domain or *',
        },
      },
      { each: true },
    ),
  );
}
