// The Batcher: requests of one event-loop turn share one run; a failing batch is retried item by item.
import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/jobs/batcher.js';

describe('Batcher', () => {
  it('serves the requests of one turn with one run, each with its own answer', async () => {
    const runs: number[][] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      runs.push(items);
      return items.map((n) => n * 2);
    });
    const answers = await Promise.all([1, 2, 3].map((n) => batcher.add(n)));
    expect(answers).toEqual([2, 4, 6]);
    expect(runs).toEqual([[1, 2, 3]]);
    expect(await batcher.add(4)).toBe(8);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('when a batch fails, each item is tried alone: one bad item fails only itself', async () => {
    const runs: number[][] = [];
    const batcher = new Batcher<number, string>(async (items) => {
      runs.push(items);
      if (items.includes(2)) throw new Error('2 is refused');
      return items.map(String);
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled[0]).toMatchObject({ value: '1' });
    expect(settled[1]).toMatchObject({ reason: new Error('2 is refused') });
    expect(runs).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('an error it is told not to retry alone (a lost connection, a timeout) fails the whole batch with one run', async () => {
    const runs: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        runs.push(items);
        throw new Error('timeout exceeded when trying to connect');
      },
      (error) => !(error as Error).message.startsWith('timeout'),
    );
    const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    expect(runs).toEqual([[1, 2, 3]]);
  });
});
