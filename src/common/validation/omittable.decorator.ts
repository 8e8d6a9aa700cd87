import { ValidateIf } from 'class-validator';

/**
 * An optional field that may be left out but not sent as `null`: `@IsOptional()` skips the field's rules for
 * `null` too, so a create body could store a `null` that no response schema allows. Use `@IsOptional()`
 * only where `null` means something (clearing a field in a PATCH).
 */
export const Omittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);
