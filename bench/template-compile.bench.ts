/**
 * Template bomb benchmark: the built server (dist/) saves the costliest templates we could write, 20 at a
 * time (`POST /admin/templates`, which compiles and test-renders each field in a template worker), while a
 * probe asks `GET /health/live` one request after another. Reported per bomb: the answers of the saves,
 * their slowest answer, and the probe's p50 / p99 / worst latency, an upper bound of the server's longest
 * event-loop stall meanwhile (docs/decisions/security-template-sandbox.md), and the server's CPU time and
 * database commands per save (the probes' share included; the template workers are threads of the server).
 * Goal: p99 <= 50 ms.
 *
 *   npm run bench -- template-compile        (BENCH_PARALLEL=20 saves at a time by default)
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { clientIpOf, costMeter, PROJECT_ROOT, startServer } from './http-bench';

const PARALLEL = Number(process.env.BENCH_PARALLEL ?? 20);
const GOAL_MS = 50;

const partials = (k: number) =>
  Array.from({ length: k }, (_, i) => `{{#*inline "p${i}"}}{{> p${i + 1}}}{{> p${i + 1}}}{{/inline}}`).join(
    '',
  ) + `{{#*inline "p${k}"}}{{/inline}}{{> p0}}`;

/** The bombs of test/helpers/template-bombs.ts at the size of an e-mail template's field. */
const BOMBS: [string, string][] = [
  ['partials, 2^30 renders', partials(30)],
  ['{{log "}}" a.b.c.d …}} (99 KB)', `{{log "}}" ${'a.b.c.d '.repeat(12_300)}}}`],
  ['{{lookup "}}" a.b.c.d …}} (99 KB)', `{{lookup "}}" ${'a.b.c.d '.repeat(12_300)}}}`],
  ['#if nested 5,000 deep (85 KB)', '{{#if a}}x'.repeat(5_000) + '{{/if}}'.repeat(5_000)],
  ['#each nested 2,000 deep (44 KB)', '{{#each a}}x'.repeat(2_000) + '{{/each}}'.repeat(2_000)],
  ['{{a}} x 20,000 (100 KB)', '{{a}}'.repeat(20_000)],
  ['lookup sub-expressions (99 KB)', '{{lookup (lookup (lookup a "b") "c") "d"}}'.repeat(2_300)],
];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const server = await startServer(
    join(PROJECT_ROOT, 'dist'),
    withDatabaseName(database.uri, 'bench_templates'),
  );
  let client = 0;
  // A client address per save (the server trusts loopback's X-Forwarded-For): the rate limit is not measured.
  const save = (name: string, htmlTemplate: string) =>
    fetch(`${server.baseUrl}/admin/templates`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': clientIpOf((client += 1)),
        ...server.admin,
      },
      body: JSON.stringify({ name, subject: 'Hi', htmlTemplate, textTemplate: 'Hi' }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: string } }));
  try {
    // Warm-up: the template workers started and a template compiled once.
    await save('warm-up', '<p>{{a}}</p>');
    console.log(`${PARALLEL} saves at a time; /health/live probed one request after another meanwhile\n`);
    console.log(
      '| bomb | answers | slowest save | /health/live p50 / p99 / worst | server CPU ms, db commands per save |',
    );
    console.log('| --- | --- | --- | --- | --- |');
    let worstP99 = 0;
    for (const [name, source] of BOMBS) {
      let running = true;
      const latencies: number[] = [];
      const probe = (async () => {
        while (running) {
          const start = performance.now();
          await fetch(`${server.baseUrl}/health/live`).then((res) => res.arrayBuffer());
          latencies.push(performance.now() - start);
        }
      })();
      const perSave = await costMeter(server);
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          save(`bomb-${i}-${Math.random()}`, source).then((answer) => ({
            ...answer,
            ms: performance.now() - started,
          })),
        ),
      );
      running = false;
      await probe;
      const { cpuUs, commands } = await perSave(PARALLEL);
      latencies.sort((a, b) => a - b);
      const p99 = percentile(latencies, 99);
      worstP99 = Math.max(worstP99, p99);
      const statuses = [...new Set(answers.map((a) => `${a.status} "${a.body.error?.slice(0, 70)}…"`))];
      const slowest = Math.max(...answers.map((a) => a.ms));
      console.log(
        `| ${name} | ${statuses.join('; ')} | ${slowest.toFixed(0)} ms | ` +
          `${[percentile(latencies, 50), p99, latencies.at(-1)!].map((ms) => ms.toFixed(1)).join(' / ')} ms ` +
          `(${latencies.length} probes) | ${((cpuUs ?? NaN) / 1000).toFixed(1)} ms, ${commands?.toFixed(2)} |`,
      );
    }
    console.log(
      `\nload average: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${cpus().length} cores`,
    );
    console.log(
      `worst /health/live p99: ${worstP99.toFixed(1)} ms (goal <= ${GOAL_MS} ms): ` +
        (worstP99 <= GOAL_MS ? 'met' : 'NOT met'),
    );
  } finally {
    await server.stop();
    await database.stop();
  }
}

void main();
