import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FieldSource, RenderResult } from './template-engine';
import { BUDGET_TEXT, TEMPLATE_LIMITS, TemplateProblem } from './template-limits';
import type { WorkerRequest } from './template-worker';

/**
 * Where templates are compiled and rendered: a few worker threads, never the event loop that answers
 * requests (docs/decisions/security-template-sandbox.md). Each worker has a V8 heap
 * of `TEMPLATE_LIMITS.heapMb` and each call a deadline of `renderMs`, after which the worker is terminated
 * and replaced; so whatever a template says, one render costs at most that time on a worker and that heap.
 * Renders of the same template asked for in one turn of the event loop go to a worker as one batch (up to
 * `BATCH_MAX`): a campaign's messages cost one round trip per batch, not one each. A batch that goes over
 * the budget is retried message by message, so only the messages that are themselves over it fail.
 */

const POOL_SIZE = 2;
const BATCH_MAX = 50;
const RESTART_DELAY_MS = 1_000;

/** null: the call went over the budget (its worker was terminated or ran out of heap). */
type Done = (results: RenderResult[] | null) => void;

interface Task {
  fields: FieldSource[];
  variables: object[];
  done: Done;
}

/**
 * How a worker is started. Built code (`dist/`, benches) runs template-worker.js; under ts-jest this module
 * is TypeScript source, so the worker compiles its own modules with the project's compiler as it loads them.
 */
const TS_BOOTSTRAP = `
const { readFileSync } = require('node:fs');
const { workerData } = require('node:worker_threads');
const ts = require(workerData.typescript);
const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
};
require.extensions['.ts'] = (module, file) =>
  module._compile(ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions }).outputText, file);
require(workerData.entry);
`;

function startWorker(): Worker {
  const entry = join(__dirname, `template-worker${extname(__filename)}`);
  const resourceLimits = { maxOldGenerationSizeMb: TEMPLATE_LIMITS.heapMb, maxYoungGenerationSizeMb: 16 };
  return entry.endsWith('.ts')
    ? new Worker(TS_BOOTSTRAP, {
        eval: true,
        resourceLimits,
        workerData: { entry, typescript: require.resolve('typescript') },
      })
    : new Worker(entry, { resourceLimits });
}

/** One worker, restarted after it is terminated or dies. */
class Slot {
  private worker!: Worker;
  private ready = false;
  private task: Task | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextId = 0;
  private closed = false;

  constructor(private readonly onIdle: () => void) {
    this.start();
  }

  get idle(): boolean {
    return this.ready && this.task === null;
  }

  run(task: Task): void {
    this.task = task;
    const request: WorkerRequest = { id: (this.nextId += 1), fields: task.fields, variables: task.variables };
    this.worker.ref();
    this.worker.postMessage(request);
    this.timer = setTimeout(() => this.replace(), TEMPLATE_LIMITS.renderMs);
  }

  private start(): void {
    this.ready = false;
    const worker = startWorker();
    this.worker = worker;
    worker.on('message', (message: { ready?: true; id?: number; results?: RenderResult[] }) => {
      // A worker still loading when its pool closes can report ready during the close: were it taken as
      // idle, the pool would start again, and its new threads outlive the close.
      if (this.closed || worker !== this.worker) return;
      if (message.ready) {
        this.ready = true;
        this.onIdle();
      } else if (message.id === this.nextId && message.results) {
        this.finish(message.results);
      }
    });
    // Out of heap, or any other death: the call it had fails as over the budget, and a new worker starts.
    // One that dies before it is ready (it cannot load) is started again a second later, not in a loop.
    const died = () => {
      if (this.closed || worker !== this.worker) return;
      if (this.ready) this.replace();
      else setTimeout(() => !this.closed && worker === this.worker && this.start(), RESTART_DELAY_MS).unref();
    };
    worker.on('error', died);
    worker.on('exit', died);
    // An idle worker does not keep the process alive. Only after the listeners: adding a 'message'
    // listener references the worker's port again, and a worker that never rendered held the process open.
    worker.unref();
  }

  /** Ends the worker for good: a call it was running fails as over the budget, and none restarts it. */
  async close(): Promise<void> {
    this.closed = true;
    this.ready = false;
    this.finish(null);
    await this.worker.terminate();
  }

  private finish(results: RenderResult[] | null): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const task = this.task;
    this.task = null;
    this.worker.unref();
    task?.done(results);
    if (this.ready) this.onIdle();
  }

  private replace(): void {
    const old = this.worker;
    this.start();
    void old.terminate();
    this.finish(null);
  }
}

class TemplateSandbox {
  private slots: Slot[] | null = null;
  private readonly queue: Task[] = [];
  private readonly gathering = new Map<FieldSource[], { variables: object[]; done: Done[] }>();
  private flushScheduled = false;
  /** While closing, a batch that fails is not retried message by message (that would start new workers). */
  private closing = false;

  /** The fields rendered with `variables`; throws a `TemplateProblem` naming the field that failed. */
  render(fields: FieldSource[], variables: object): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const done: Done = (results) => {
        const result = results?.[0];
        if (!result) reject(overBudget(fields));
        else if ('values' in result) resolve(result.values);
        else reject(new TemplateProblem(result.field, result.problem));
      };
      this.gather(fields, variables, done);
    });
  }

  /**
   * Ends the workers and waits until their threads are gone (calls not yet answered fail as over the budget);
   * the next render starts new ones. A process that exits with workers still loading waits for them.
   */
  async close(): Promise<void> {
    const slots = this.slots ?? [];
    this.slots = null;
    this.closing = true;
    try {
      for (const batch of this.gathering.values()) for (const done of batch.done) done(null);
      this.gathering.clear();
      for (const task of this.queue.splice(0)) task.done(null);
      await Promise.all(slots.map((slot) => slot.close()));
    } finally {
      this.closing = false;
    }
  }

  private gather(fields: FieldSource[], variables: object, done: Done): void {
    let batch = this.gathering.get(fields);
    if (!batch) {
      batch = { variables: [], done: [] };
      this.gathering.set(fields, batch);
    }
    batch.variables.push(variables);
    batch.done.push(done);
    if (batch.variables.length >= BATCH_MAX) this.send(fields);
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        for (const gathered of [...this.gathering.keys()]) this.send(gathered);
      });
    }
  }

  private send(fields: FieldSource[]): void {
    const batch = this.gathering.get(fields)!;
    this.gathering.delete(fields);
    this.enqueue({
      fields,
      variables: batch.variables,
      done: (results) => {
        if (results) return batch.done.forEach((done, i) => done([results[i]]));
        if (batch.done.length === 1 || this.closing) return batch.done.forEach((done) => done(null));
        // Over the budget as a batch: each message alone, ahead of the queue, so only the offenders fail.
        batch.variables.forEach((variables, i) =>
          this.enqueue({ fields, variables: [variables], done: batch.done[i] }, true),
        );
      },
    });
  }

  private enqueue(task: Task, first = false): void {
    if (first) this.queue.unshift(task);
    else this.queue.push(task);
    this.dispatch();
  }

  private dispatch(): void {
    // Workers start for work only: a call with nothing queued starts no pool.
    if (this.queue.length === 0) return;
    this.slots ??= Array.from({ length: POOL_SIZE }, () => new Slot(() => this.dispatch()));
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.idle) slot.run(this.queue.shift()!);
    }
  }
}

const overBudget = (fields: FieldSource[]) =>
  new TemplateProblem(
    fields.map((f) => f.field).join(', '),
    `rendering went over the template budget (${BUDGET_TEXT})`,
  );

const sandbox = new TemplateSandbox();

/**
 * The fields rendered with `variables` in a template worker. Pass the same `fields` array for every message
 * of one template: renders of the same array asked for together are batched. Throws a `TemplateProblem`.
 */
export function renderInSandbox(fields: FieldSource[], variables: object): Promise<string[]> {
  return sandbox.render(fields, variables);
}

/**
 * Throws a `TemplateProblem` naming the first field that does not compile, fails when rendered with no
 * variables, or goes over the budget doing so. Each field is tried alone, so the message names it.
 */
export async function checkInSandbox(fields: FieldSource[]): Promise<void> {
  const outcomes = await Promise.allSettled(fields.map((field) => sandbox.render([field], {})));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Ends the template workers of this module instance (each test file has its own: the test set-up closes them,
 * so a Jest worker never exits while one is still loading).
 */
export function closeTemplateSandbox(): Promise<void> {
  return sandbox.close();
}
