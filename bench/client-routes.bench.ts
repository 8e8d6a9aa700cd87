/**
 * Client-app routes benchmark: requests per second, server CPU and database commands per request of the
 * routes an app's backend calls (a want, a vote, a feedback submission, the app's tickets), as ratios
 * against bare Fastify answering a JSON body in the same run.
 *
 *   npm run bench -- client-routes            (BENCH_DURATION=3 for a quick run)
 *   BENCH_BASELINE_DIST=/path/to/other/checkout/dist npm run bench -- client-routes   (before/after)
 *
 * - `GET /:appId/wants/:id` with an `X-API-Key` (the want and the caller's vote);
 * - `POST /:appId/wants/:id/vote` with the key: each request from a client address of its own, so each is
 *   a new voter and adds a vote;
 * - `POST /:appId/feedback` (no credential), a body per request;
 * - `GET /:appId/tickets` and `GET /:appId/tickets/:id` with the admin's bearer token (100 tickets).
 *
 * Servers, load and columns as in bench/auth.bench.ts (bench/README.md explains them).
 */
import { type BenchServer, call, compareBuilds, type Scenario, startServer } from './http-bench';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 50;
const APP_ID = 'bench-app';
const TICKETS = 100;

interface Target {
  label: string;
  server: BenchServer;
  apiKey: Record<string, string>;
  wantId: string;
  ticketId: string;
}

const idOf = (answer: Record<string, unknown>) => String((answer.data as Record<string, unknown>)._id);

/** Starts one build's server and seeds an app with an API key, a want and TICKETS tickets. */
async function startTarget(label: string, dist: string, mongoUri: string): Promise<Target> {
  const server = await startServer(dist, mongoUri);
  const { baseUrl, admin } = server;
  await call(baseUrl, 'POST', '/admin/apps', admin, { id: APP_ID, name: 'Bench app' });
  const key = await call(baseUrl, 'POST', '/api-keys', admin, { appId: APP_ID, name: 'Bench key' });
  const apiKey = { 'x-api-key': String((key.data as Record<string, unknown>).key) };
  const want = await call(baseUrl, 'POST', `/${APP_ID}/wants`, apiKey, {
    title: 'Dark mode',
    description: 'For the evening',
    category: 'ui',
  });
  let ticketId = '';
  for (let i = 0; i < TICKETS; i += 1) {
    const ticket = await call(baseUrl, 'POST', `/${APP_ID}/tickets`, admin, {
      email: `customer${i}@example.com`,
      subject: `Order ${i} has not arrived`,
      message: 'The tracking page shows nothing.',
    });
    ticketId = idOf(ticket);
  }
  return { label, server, apiKey, wantId: idOf(want), ticketId };
}

function scenariosOf({ label, server, apiKey, wantId, ticketId }: Target): Scenario[] {
  const app = `${server.baseUrl}/${APP_ID}`;
  return [
    { name: `${label} GET /:appId/wants/:id`, url: `${app}/wants/${wantId}`, headers: apiKey },
    {
      name: `${label} POST /:appId/wants/:id/vote (new voter)`,
      url: `${app}/wants/${wantId}/vote`,
      method: 'POST',
      headers: apiKey,
    },
    {
      name: `${label} POST /:appId/feedback`,
      url: `${app}/feedback`,
      method: 'POST',
      headers: {},
      body: (n) => ({ type: 'bug', subject: `Crash ${n}`, message: 'It crashes when I save.' }),
    },
    { name: `${label} GET /:appId/tickets`, url: `${app}/tickets`, headers: server.admin },
    { name: `${label} GET /:appId/tickets/:id`, url: `${app}/tickets/${ticketId}`, headers: server.admin },
  ];
}

async function main(): Promise<void> {
  await compareBuilds({
    bench: 'client',
    // About the size of a want's answer.
    bareBody: {
      success: true,
      data: { _id: '665f1c0a9d3e4b2a1c0d9e8f', title: 'Dark mode', voteCount: 1, hasVoted: true },
    },
    start: startTarget,
    scenarios: scenariosOf,
    connections: CONNECTIONS,
    durationS: DURATION_S,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
