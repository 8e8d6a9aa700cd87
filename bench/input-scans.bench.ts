/**
 * Input scans benchmark: the checks that must stay linear on hostile input, timed at two sizes (n and 10n):
 * the campaign link scan on HTML full of unclosed `<a` tags, the e-mail address check on a huge address,
 * and the import check of n entries. A linear scan takes about 10× as long at 10n, a quadratic one 100×;
 * one that stops early (the address check refuses an over-long address first) takes the same time.
 * These were wall-clock bounds in the unit tests; the tests now check the answers, this measures the time.
 *
 *   npm run bench -- input-scans        (BENCH_ROUNDS=5: the best of that many runs per size)
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isSendableAddress } from '../src/common/validation/email-address';
import { splitAtLinks } from '../src/email/tracking/tracked-html';
import { checkImportEntry } from '../src/newsletter/subscriber-import-entry';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Scan {
  name: string;
  /** What `n` counts. */
  unit: string;
  n: number;
  /** Builds the input of size n outside the timing; `run` is what is timed. */
  input: (n: number) => unknown;
  run: (input: never) => unknown;
}

const SCANS: Scan[] = [
  {
    name: 'campaign links: HTML with n unclosed `<a `',
    unit: 'tags',
    n: 30_000,
    input: (n) => '<a href="https://shop.example.com/">shop</a>' + '<a '.repeat(n),
    run: (html: string) => splitAtLinks(html),
  },
  {
    name: 'e-mail address: n labels `a.` before the @',
    unit: 'labels',
    n: 5_000,
    input: (n) => `${'a.'.repeat(n)}@example.com`,
    run: (address: string) => isSendableAddress(address),
  },
  {
    name: 'import entries: n valid entries checked',
    unit: 'entries',
    n: 10_000,
    input: (n) => Array.from({ length: n }, (_, i) => ({ email: `reader-${i}@example.com`, locale: 'en' })),
    run: (entries: unknown[]) => entries.map(checkImportEntry),
  },
];

/** The best of ROUNDS timings, in milliseconds (the least disturbed by other work on the machine). */
function best(scan: Scan, n: number): number {
  const input = scan.input(n) as never;
  let fastest = Infinity;
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    scan.run(input);
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function main(): void {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; best of ${ROUNDS} runs\n`,
  );
  const rows = SCANS.map((scan) => {
    best(scan, scan.n); // warm-up: compiled code, not the first run's interpretation
    const small = best(scan, scan.n);
    const large = best(scan, scan.n * 10);
    return {
      scan: scan.name,
      n: `${scan.n.toLocaleString('en')} ${scan.unit}`,
      'µs at n': (small * 1000).toFixed(1),
      'µs at 10n': (large * 1000).toFixed(1),
      'ratio (linear ≈ 10)': (large / small).toFixed(1),
    };
  });
  console.table(rows);
}

main();
