import type { QueryFilter } from 'mongoose';
import { containsText } from '../common/database/text-pattern';
import type { Contact } from './schemas/contact.schema';

/**
 * The people whose address, first or last name contains `search` (any case): the search of the contacts and
 * subscriber lists. No `$text` on every deployment, so an escaped substring match; callers cap the length.
 */
export function personSearch(search: string): QueryFilter<Contact> {
  const pattern = containsText(search);
  return { $or: [{ email: pattern }, { firstName: pattern }, { lastName: pattern }] };
}
