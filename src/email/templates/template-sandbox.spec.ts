import { renderInSandbox } from './template-sandbox';

/** The kinds of handle a worker thread holds: while any is referenced, the process cannot exit. */
const workerHandles = () =>
  process.getActiveResourcesInfo().filter((kind) => kind === 'MessagePort' || kind === 'Worker');

describe('Template sandbox', () => {
  it('holds the process open only while it renders: an idle worker, used or not, keeps nothing alive', async () => {
    const before = workerHandles();
    // The first render starts the whole pool; one worker renders, the others wait unused.
    const rendered = await renderInSandbox([{ field: 'subject', source: 'Hi {{name}}', mode: 'plain' }], {
      name: 'Ada',
    });
    expect(rendered).toEqual(['Hi Ada']);
    expect(workerHandles()).toEqual(before);
  });
});
