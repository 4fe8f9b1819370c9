import { describe, expect, it } from 'vitest';
import { requestsFirst } from '../../src/jobs/requests-first.js';

describe('requestsFirst', () => {
  it('returns at once while no request waits for a connection', async () => {
    const giveWay = requestsFirst({ waitingCount: 0 }, 10_000);
    let done = false;
    void giveWay().then(() => {
      done = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(true);
  });

  it('waits while requests wait, and goes on as soon as they stop', async () => {
    const pool = { waitingCount: 3 };
    let done = false;
    const waiting = requestsFirst(pool, 10_000)().then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(done).toBe(false);
    pool.waitingCount = 0;
    await waiting;
    expect(done).toBe(true);
  });

  it('waits no longer than its bound under a sustained overload, so background work still runs', async () => {
    const giveWay = requestsFirst({ waitingCount: 5 }, 40);
    const started = performance.now();
    await giveWay();
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
  });
});
