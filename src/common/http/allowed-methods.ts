import type { FastifyInstance, HTTPMethods } from 'fastify';

/** The order an `Allow` header lists methods in. */
const METHOD_ORDER: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The methods some route answers on this request URL (its query and trailing slashes ignored), so an
 * undeclared method on a known path is told apart from an unknown path: 405 with `Allow` (RFC 9110 §15.5.6)
 * instead of 404. Fastify's own router is asked once per method, a few tree lookups: testing the path
 * against every route's pattern made each 404 cost more than the rest of its pipeline. Catch-all routes
 * (the CORS preflight `OPTIONS *`, static files) make no path known. Only requests no route answered pay
 * for it.
 */
export function allowedMethods(fastify: FastifyInstance, url: string): HTTPMethods[] {
  const path = url.split('?')[0].replace(/(.)\/+$/, '$1');
  return METHOD_ORDER.filter((method) => {
    const route = fastify.findRoute({ method, url: path });
    return route !== null && !('*' in (route.params as object));
  });
}
