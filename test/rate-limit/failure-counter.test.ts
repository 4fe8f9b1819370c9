// The per-IP failure counter in Redis: fixed windows (the first failure sets the expiry, later ones do not extend
// it), counts per key, a new window after expiry.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisFailureCounter } from '../../src/rate-limit/failure-counter.js';
import { redisUrl } from '../helpers/database.js';

describe.skipIf(!redisUrl())('RedisFailureCounter (requires Redis: TEST_REDIS_URL)', () => {
  const redis = new Redis(redisUrl() ?? '');
  afterAll(() => redis.disconnect());

  it('counts failures per key in a fixed window that later failures do not extend, then starts a new one', async () => {
    const prefix = `oct:test:${randomBytes(4).toString('hex')}:`;
    const counter = new RedisFailureCounter(redis, 400, prefix);
    const first = await counter.hit('198.51.100.7');
    expect(first.count).toBe(1);
    expect(first.resetInMs).toBeGreaterThan(300);
    expect(first.resetInMs).toBeLessThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await counter.hit('198.51.100.7');
    expect(second.count).toBe(2);
    expect(second.resetInMs).toBeLessThanOrEqual(first.resetInMs - 100); // the same window, not extended
    expect((await counter.hit('198.51.100.8')).count).toBe(1); // another address, its own count
    // Two counters on one client (two app instances in one process) share the command and the counts.
    expect((await new RedisFailureCounter(redis, 400, prefix).hit('198.51.100.7')).count).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(await counter.hit('198.51.100.7')).toMatchObject({ count: 1 });
  });
});
