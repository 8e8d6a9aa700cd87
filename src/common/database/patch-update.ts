import { BadRequestException } from '@nestjs/common';

/** A PATCH body as a MongoDB update: the values sent, and the fields cleared with `null`. */
export type PatchUpdate<T> = {
  $set: { [K in keyof T]?: Exclude<T[K], null | undefined> };
  $unset?: { [K in keyof T]?: 1 };
};

/**
 * Turns a PATCH body into `$set` and `$unset`. A field left out (`undefined`) is not touched; `null`
 * removes a field listed in `clearable` and is a 400 naming the field anywhere else (optional fields'
 * validators let `null` through, and "remove" is what it means); any other value is set. `$unset` is
 * present only when something is cleared: servers before MongoDB 5.0 refuse an empty operator.
 */
export function patchUpdate<T extends object>(
  dto: T,
  clearable: readonly (keyof T & string)[] = [],
): PatchUpdate<T> {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, 1> = {};
  for (const [field, value] of Object.entries(dto)) {
    if (value === undefined) continue;
    if (value !== null) $set[field] = value;
    else if ((clearable as readonly string[]).includes(field)) $unset[field] = 1;
    else throw new BadRequestException(`${field} must not be null`);
  }
  const update = Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
  return update as PatchUpdate<T>;
}
