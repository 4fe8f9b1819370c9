// WakeableLoop passes are background work whoever wakes them: a request's wake must not hand its pass the request's
// place in the pool queue nor its short wait for a connection.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WakeableLoop } from '../../src/jobs/wakeable-loop.js';
import { inForeground, isForeground } from '../../src/storage/database.js';

describe('WakeableLoop', () => {
  it('runs a pass woken from a request as background, and the passes it chains too', async () => {
    const seen: boolean[] = [];
    let loop!: WakeableLoop;
    loop = new WakeableLoop({
      name: 'test', databaseUrl: 'postgresql://unused', channel: 'unused', pollMs: 60_000, log: pino({ level: 'silent' }),
      pass: async () => {
        seen.push(isForeground());
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (seen.length === 1) inForeground(() => loop.wake()); // woken again by a request during the pass
      },
    });
    inForeground(() => {
      expect(isForeground()).toBe(true);
      loop.wake();
    });
    await loop.settle();
    expect(seen).toEqual([false, false]);
  });
});
