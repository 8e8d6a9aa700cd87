// @ts-check
/**
 * Benchmarks only: loaded into the server they start with `node --require` (bench/http-bench.ts), never by
 * the service. Counts the database commands the process sends, for the benchmark to divide by the requests
 * it made, and answers over the IPC channel of the fork (no route exists for it). It hands itself to the
 * service as a connection observer (src/database/connection-observers.ts).
 */
const OBSERVERS = Symbol.for('admin-service.connection-observers');
const MESSAGE = 'db-command-count';

let commands = 0;
/** A build from before the observers (a BENCH_BASELINE_DIST) never calls this: no answer, shown as empty. */
let observed = false;
/** @type {Record<symbol, Array<(connection: import('mongoose').Connection) => void>>} */
const holder = /** @type {any} */ (globalThis);
(holder[OBSERVERS] ??= []).push((connection) => {
  observed = true;
  connection.getClient().on('commandStarted', () => (commands += 1));
});
process.on('message', (message) => {
  if (message === MESSAGE && observed) process.send?.({ type: MESSAGE, commands });
});
