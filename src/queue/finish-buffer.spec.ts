import type { Logger } from '@nestjs/common';
import type { ObjectId } from 'mongodb';
import { FINISH_WINDOW_MS, FinishBuffer } from './finish-buffer';
import type { Finished } from './lease-queue.store';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const logger = { warn: jest.fn(), error: jest.fn() } as unknown as Logger;
const outcome = (n: number): Finished<string> => ({
  id: n as unknown as ObjectId,
  attempts: 1,
  lockToken: `token-${n}`,
  outcome: 'completed',
});

describe('FinishBuffer', () => {
  it('writes a few outcomes within the window, without waiting for a full batch', async () => {
    const batches: number[] = [];
    const buffer = new FinishBuffer<string, Finished<string>>(
      (batch) => Promise.resolve(batches.push(batch.length) && batch.length),
      50,
      logger,
      () => undefined,
    );
    // The window on a fake clock: what is asserted is when the batch is written, however busy the machine.
    jest.useFakeTimers();
    try {
      await buffer.add(outcome(1));
      await buffer.add(outcome(2));
      await jest.advanceTimersByTimeAsync(FINISH_WINDOW_MS - 1);
      expect(batches).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([2]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('still writes full batches under load, and a flush waits for the writes under way', async () => {
    const batches: number[] = [];
    const buffer = new FinishBuffer<string, Finished<string>>(
      async (batch) => {
        await sleep(20);
        batches.push(batch.length);
        return batch.length;
      },
      50,
      logger,
      () => undefined,
    );
    await Promise.all(Array.from({ length: 120 }, (_, n) => buffer.add(outcome(n))));
    await buffer.flush();
    expect(batches).toEqual([50, 50, 20]);
  });
});
