/**
 * The JWT of an `Authorization: Bearer <jwt>` header, or null when the header is missing or not of that
 * shape.
 */
export function bearerToken(request: {
  headers: Record<string, string | string[] | undefined>;
}): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  return /^Bearer ([\w-]+\.[\w-]+\.[\w-]*)$/i.exec(header)?.[1] ?? null;
}
