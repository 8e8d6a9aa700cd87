/** A field name as code writes one; anything else (an address used as a key, say) is not recorded. */
const FIELD_NAME = /^[A-Za-z_$][\w$-]{0,63}$/;
const MAX_FIELDS = 50;
const MAX_DEPTH = 2;

/**
 * The names of the fields a request body sent, nested ones dotted (`profile.bio`) to two levels, sorted:
 * what changed, never the values (a password, a person's address) and never a key that is not a plain
 * name. Capped, so a body of 10,000 keys records 50.
 */
export function fieldNames(body: unknown): string[] {
  const names: string[] = [];
  const walk = (value: unknown, prefix: string, depth: number) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return;
    for (const key of Object.keys(value)) {
      if (names.length >= MAX_FIELDS) return;
      if (!FIELD_NAME.test(key)) continue;
      const inner = (value as Record<string, unknown>)[key];
      const nested =
        depth < MAX_DEPTH && typeof inner === 'object' && inner !== null && !Array.isArray(inner);
      if (nested && Object.keys(inner).length > 0) walk(inner, `${prefix}${key}.`, depth + 1);
      else names.push(`${prefix}${key}`);
    }
  };
  walk(body, '', 1);
  return names.sort();
}
