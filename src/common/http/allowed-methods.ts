/** The order an `Allow` header lists methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A route path as a pattern of whole request paths (`:param` one segment); null for a catch-all (`*`). */
function patternOf(url: string): RegExp | null {
  if (url.includes('*')) return null;
  const source = url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+');
  return new RegExp(`^${source}$`);
}

/**
 * The methods each route path answers, recorded as routes are registered (Fastify's `onRoute`), so an
 * undeclared method on a known path is told apart from an unknown path: 405 with `Allow` (RFC 9110 §15.5.6)
 * instead of 404. Catch-all routes (the CORS preflight `OPTIONS *`, static files) make no path known. Only
 * requests no route answered pay for the lookup.
 */
export class AllowedMethods {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  record(url: string, method: string | string[]): void {
    const pattern = patternOf(url);
    if (!pattern) return;
    const route = this.routes.get(url) ?? { pattern, methods: new Set<string>() };
    for (const name of [method].flat()) route.methods.add(name.toUpperCase());
    if (route.methods.has('GET')) route.methods.add('HEAD');
    this.routes.set(url, route);
  }

  /** The methods some route answers on this request URL (its query and a trailing slash ignored). */
  allowedFor(url: string): string[] {
    const path = url.split('?')[0].replace(/(.)\/+$/, '$1');
    const allowed = new Set<string>();
    for (const { pattern, methods } of this.routes.values()) {
      if (pattern.test(path)) for (const method of methods) allowed.add(method);
    }
    return METHOD_ORDER.filter((method) => allowed.has(method));
  }
}
