import { Worker } from 'node:worker_threads';
import { closeTemplateSandbox, renderInSandbox } from './template-sandbox';

/** The kinds of handle a worker thread holds: while any is referenced, the process cannot exit. */
const workerHandles = () =>
  process.getActiveResourcesInfo().filter((kind) => kind === 'MessagePort' || kind === 'Worker');

const greeting = [{ field: 'subject', source: 'Hi {{name}}', mode: 'plain' as const }];

describe('Template sandbox', () => {
  it('holds the process open only while it renders: an idle worker, used or not, keeps nothing alive', async () => {
    const before = workerHandles();
    // The first render starts the whole pool; one worker renders, the others wait unused.
    const rendered = await renderInSandbox(greeting, { name: 'Ada' });
    expect(rendered).toEqual(['Hi Ada']);
    expect(workerHandles()).toEqual(before);
  });

  it('fails a render under way when closed, and starts new workers for the next one', async () => {
    const running = renderInSandbox(greeting, { name: 'Ada' });
    const closed = closeTemplateSandbox();
    await expect(running).rejects.toThrow('over the template budget');
    await closed;
    await expect(renderInSandbox(greeting, { name: 'Grace' })).resolves.toEqual(['Hi Grace']);
  });

  it('fails a batch under way when closed, without retrying its messages on new workers', async () => {
    await renderInSandbox(greeting, { name: 'warm-up' });
    // Asked for in one turn: one batch of three on one worker.
    const running = ['Ada', 'Grace', 'Edsger'].map((name) => renderInSandbox(greeting, { name }));
    await new Promise((resolve) => setImmediate(resolve));
    const outcomes = Promise.allSettled(running);
    await closeTemplateSandbox();
    // Retried one by one, they would have been rendered by the workers the retry started.
    expect((await outcomes).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});

describe('Template sandbox closing while a worker reports ready', () => {
  afterEach(() => jest.restoreAllMocks());

  it('starts no new workers', async () => {
    await renderInSandbox(greeting, { name: 'warm-up' });
    // Under load a worker can still be loading when the pool closes; its `ready` arrives during the close.
    // Read along the prototype chain: a wrapped Worker class (a diagnostic test environment) inherits it.
    const terminate = Reflect.get(Worker.prototype, 'terminate');
    jest.spyOn(Worker.prototype, 'terminate').mockImplementation(function (this: Worker) {
      this.emit('message', { ready: true });
      return terminate.call(this);
    });
    const listened = jest.spyOn(Worker.prototype, 'on');
    await closeTemplateSandbox();
    // Every worker the pool starts listens for its messages first.
    expect(listened.mock.calls.filter(([event]) => event === 'message')).toEqual([]);
  });
});
