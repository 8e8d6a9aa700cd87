/**
 * Template compile benchmark: the largest templates the limits accept (email/templates/template-limits.ts),
 * in several shapes, each compiled once in this process after a warm-up (as a running server would), with
 * the compile's duration and the event loop's longest stall while it ran (`monitorEventLoopDelay` and a
 * 1 ms timer probe). Goal: the worst stall at most 100 ms. Also the campaign paths around the compile
 * (text part derived from the HTML, tracked links) and the 200 KB `{{a}}` template of issue 24, refused.
 *
 *   npm run bench -- template-compile
 */
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { compileTemplate, templateCompiles } from '../src/email/templates/template-compiler';
import { TEMPLATE_LIMITS, TemplateProblem } from '../src/email/templates/template-limits';
import { CampaignRenderer } from '../src/newsletter/campaigns/campaign-renderer';

const { maxLength, maxExpressions, maxDepth } = TEMPLATE_LIMITS;
const GOAL_MS = 100;

/** `body` repeated to fill `tokens` expressions, one nest `maxDepth` deep, padded with HTML to `maxLength`. */
function atLimits(body: (i: number) => string, tokensEach: number, nestTokens = 3 * maxDepth): string {
  const nest = '{{#if a}}'.repeat(maxDepth) + 'x' + '{{/if}}'.repeat(maxDepth);
  const count = Math.floor((maxExpressions - nestTokens) / tokensEach);
  const core = nest + Array.from({ length: count }, (_, i) => body(i)).join('');
  const filler = '<p>Plain words of a newsletter, no expressions.</p>\n';
  return (
    core +
    filler.repeat(Math.floor((maxLength - core.length) / filler.length)).slice(0, maxLength - core.length)
  );
}

const SHAPES: [string, string][] = [
  ['{{a}} mustaches', atLimits(() => '{{a}}', 1)],
  ['{{aN}} distinct names', atLimits((i) => `{{a${i}}}`, 1)],
  ['{{{a}}} unescaped', atLimits(() => '{{{a}}}', 1)],
  ['10-segment paths', atLimits(() => '{{a.b.c.d.e.f.g.h.i.j}}', 10)],
  ['if blocks', atLimits(() => '{{#if a}}x{{/if}}', 3)],
  ['each blocks, distinct', atLimits((i) => `{{#each a${i}}}{{b}}{{/each}}`, 4)],
  ['lookup sub-expressions', atLimits(() => '{{lookup (lookup a "b") "c"}}', 7)],
  ['plain HTML only', atLimits(() => '', 1, 0).replace(/\{\{[^}]*\}\}/g, '')],
];

interface Figures {
  ms: number;
  /** CPU time of this thread's work (user + system); on a busy machine wall time inflates, this does less. */
  cpuMs: number;
  stallMs: number;
}

/** Runs `work` once from a timer and reports its duration and the longest event-loop stall around it. */
async function measure(work: () => void): Promise<Figures> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let last = performance.now();
  let longestGap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 1);
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 20));
  let ms = 0;
  let cpuMs = 0;
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      const start = performance.now();
      const cpu = process.cpuUsage();
      work();
      ms = performance.now() - start;
      const used = process.cpuUsage(cpu);
      cpuMs = (used.user + used.system) / 1000;
      resolve();
    }, 5),
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  clearInterval(probe);
  return { ms, cpuMs, stallMs: Math.max(longestGap, histogram.max / 1e6) };
}

const row = (name: string, chars: number, f: Figures) =>
  `${name.padEnd(40)} ${String(chars).padStart(8)} ${f.ms.toFixed(1).padStart(10)} ${f.cpuMs.toFixed(1).padStart(8)} ${f.stallMs.toFixed(1).padStart(10)}`;

async function main(): Promise<void> {
  // Warm-up: a server has compiled templates before; the first compile also loads and optimises Handlebars.
  for (let i = 0; i < 50; i += 1)
    compileTemplate('warmup', `<p>{{a${i}}} {{#if b}}{{c.d}}{{/if}}</p>`, 'html');
  console.log(
    `limits: ${maxLength} characters, ${maxExpressions} expressions, depth ${maxDepth}; goal: stall <= ${GOAL_MS} ms`,
  );
  console.log(
    `${'largest accepted template'.padEnd(40)} ${'chars'.padStart(8)} ${'compile ms'.padStart(10)} ${'cpu ms'.padStart(8)} ${'stall ms'.padStart(10)}`,
  );
  let worst = 0;
  for (const [name, source] of SHAPES) {
    const f = await measure(() => compileTemplate('htmlContent', source, 'html'));
    worst = Math.max(worst, f.stallMs);
    console.log(row(name, source.length, f));
  }

  console.log('\ncampaign paths (content at the limits)');
  const links = atLimits((i) => `<a href="https://shop.example.com/p/${i}">item ${i}</a> {{a}}`, 1);
  const derived = await measure(
    () => new CampaignRenderer({ subject: 'S', htmlContent: SHAPES[0][1], textContent: null }, false),
  );
  console.log(row('test copy, text derived from the HTML', SHAPES[0][1].length, derived));
  const tracked = await measure(
    () => new CampaignRenderer({ subject: 'S', htmlContent: links, textContent: 'T' }, true),
  );
  console.log(
    row(
      `send, ${new CampaignRenderer({ subject: 'S', htmlContent: links, textContent: 'T' }, true).links.length} tracked links`,
      links.length,
      tracked,
    ),
  );
  worst = Math.max(worst, derived.stallMs, tracked.stallMs);
  const before = templateCompiles();
  const again = await measure(
    () => new CampaignRenderer({ subject: 'S', htmlContent: SHAPES[0][1], textContent: null }, false),
  );
  console.log(
    row('second test copy (cached)', SHAPES[0][1].length, again),
    `compiles: ${templateCompiles() - before}`,
  );

  console.log('\nissue 24: 200 KB of {{a}}');
  const issue = '{{a}}'.repeat(40_000);
  let refusal = '';
  const refused = await measure(() => {
    try {
      compileTemplate('htmlTemplate', issue, 'html');
    } catch (error) {
      if (error instanceof TemplateProblem) refusal = error.message;
      else throw error;
    }
  });
  console.log(row('refused before parsing', issue.length, refused), `"${refusal.slice(0, 60)}…"`);
  console.log(
    `load average: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} cores`,
  );
  console.log(
    `\nworst stall at the limits: ${worst.toFixed(1)} ms (goal <= ${GOAL_MS} ms): ${worst <= GOAL_MS ? 'met' : 'NOT met'}`,
  );
}

void main();
