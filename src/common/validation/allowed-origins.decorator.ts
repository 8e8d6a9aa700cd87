import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { isOriginPattern } from '../auth/origin-match';

export const MAX_ALLOWED_ORIGINS = 50;

/** An optional `allowedOrigins` list: each entry a full URL, `*.domain`, `https://*.domain` or `*`. */
export function AllowedOriginsProperty(description: string) {
  return applyDecorators(
    ApiPropertyOptional({
      type: [String],
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
