import { NotFoundException } from '@nestjs/common';
import { isObjectIdOrHexString } from 'mongoose';

/**
 * `id` when it is an ObjectId's 24-hex form, else a 404 with `notFound`. A malformed id is answered like an
 * unknown one (not a 400, nor a cast error from the database), so ids cannot be probed by their shape.
 */
export function validObjectIdOr404(id: string, notFound: string): string {
  if (!isObjectIdOrHexString(id)) throw new NotFoundException(notFound);
  return id;
}

/**
 * What `find` returns for the record `id` names, or a 404 with `notFound` when the id is malformed or
 * `find` finds nothing (unknown, or outside the caller's scope: `find` puts the scope in its filter).
 */
export async function findByIdOr404<T>(
  id: string,
  notFound: string,
  find: (id: string) => Promise<T | null>,
): Promise<T> {
  const found = await find(validObjectIdOr404(id, notFound));
  if (found === null) throw new NotFoundException(notFound);
  return found;
}
