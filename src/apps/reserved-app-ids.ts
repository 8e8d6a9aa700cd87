/**
 * App ids that would shadow routes. App routes put the id where other routes have a fixed word
 * (`/:appId/tickets` beside `/tickets/stats`, `/admin/:appId/wants` beside `/admin/apps/:id`), and the
 * router prefers the fixed word: an app called `admin` or `apps` would never reach its own routes, or
 * would answer for another route. The list is every fixed first segment of a route (and of the API contract's
 * routes still to come), every fixed segment right after `/admin/`, and Swagger's two paths.
 * `test/operator-errors.e2e-spec.ts` derives these from the route table and fails when one is missing.
 */
export const RESERVED_APP_IDS: readonly string[] = [
  'admin',
  'api-keys',
  'apps',
  'audit-log',
  'auth',
  'c',
  'chat-routing',
  'contacts',
  'docs',
  'docs-json',
  'email-events',
  'email-jobs',
  'health',
  'joinlist',
  'o',
  'sender-domains',
  'templates',
  'tickets',
  'unsubscribe',
  'users',
];

const reserved = new Set(RESERVED_APP_IDS);

export const isReservedAppId = (id: string) => reserved.has(id);
