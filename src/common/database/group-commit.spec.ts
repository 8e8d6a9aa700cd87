import { failed, GroupCommit, settled } from './group-commit';

describe('GroupCommit', () => {
  it('runs what arrives together as one batch, and what arrives meanwhile as the next', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return items.map((n) => settled(n * 2));
    }, 100);
    const first = [1, 2, 3].map((n) => commit.submit(n));
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = [4, 5].map((n) => commit.submit(n));
    expect(await Promise.all([...first, ...second])).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('fails only the item whose outcome is an error, and every item when the batch throws', async () => {
    const commit = new GroupCommit<number, number>((items) => {
      if (items.includes(0)) return Promise.reject(new Error('batch refused'));
      return Promise.resolve(items.map((n) => (n < 0 ? failed<number>(new Error(`bad ${n}`)) : settled(n))));
    }, 100);
    const results = await Promise.allSettled([commit.submit(1), commit.submit(-1)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    const refused = await Promise.allSettled([commit.submit(0), commit.submit(2)]);
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // The helper keeps working after a failed batch.
    expect(await commit.submit(3)).toBe(3);
  });

  it('splits a queue longer than the batch size', async () => {
    const sizes: number[] = [];
    const commit = new GroupCommit<number, number>((items) => {
      sizes.push(items.length);
      return Promise.resolve(items.map((n) => settled(n)));
    }, 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => commit.submit(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });
});
