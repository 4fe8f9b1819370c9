// Fixed-window counts in Redis (the per-key rate limit and the failed-auth throttle share them): the first hit sets
// the expiry, later ones do not extend it, counts per key, a new window after expiry.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryFixedWindow, RedisFixedWindow } from '../../src/rate-limit/fixed-window.js';
import { redisUrl } from '../helpers/database.js';

describe.skipIf(!redisUrl())('RedisFixedWindow (requires Redis: TEST_REDIS_URL)', () => {
  const redis = new Redis(redisUrl() ?? '');
  afterAll(() => redis.disconnect());

  it('counts hits per key in a fixed window that later hits do not extend, then starts a new one', async () => {
    const prefix = `oct:test:${randomBytes(4).toString('hex')}:`;
    const counter = new RedisFixedWindow(redis, prefix);
    // A window long enough that a busy machine's pauses between the hits below do not end it early.
    const WINDOW_MS = 1_500;
    const first = await counter.hit('198.51.100.7', WINDOW_MS);
    expect(first).toEqual({ count: 1, resetInMs: WINDOW_MS });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await counter.hit('198.51.100.7', WINDOW_MS);
    expect(second.count).toBe(2);
    expect(second.resetInMs).toBeLessThanOrEqual(first.resetInMs - 100); // the same window, not extended
    expect((await counter.hit('198.51.100.8', WINDOW_MS)).count).toBe(1); // another key, its own count
    // Two counters on one client (two app instances in one process) share the command and the counts.
    expect((await new RedisFixedWindow(redis, prefix).hit('198.51.100.7', WINDOW_MS)).count).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 50));
    expect(await counter.hit('198.51.100.7', WINDOW_MS)).toMatchObject({ count: 1 });
  });

  it('gives a key that lost its expiry a window instead of counting it forever', async () => {
    const prefix = `oct:test:${randomBytes(4).toString('hex')}:`;
    await redis.set(`${prefix}k`, '7');
    const seen = await new RedisFixedWindow(redis, prefix).hit('k', 400);
    expect(seen).toMatchObject({ count: 8, resetInMs: 400 });
    const ttl = await redis.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(400);
  });
});

describe('MemoryFixedWindow', () => {
  it('counts per key in a fixed window, then starts a new one', async () => {
    let now = 1_000;
    const counter = new MemoryFixedWindow(() => now);
    expect(await counter.hit('a', 400)).toEqual({ count: 1, resetInMs: 400 });
    now += 150;
    expect(await counter.hit('a', 400)).toEqual({ count: 2, resetInMs: 250 });
    expect(await counter.hit('b', 400)).toEqual({ count: 1, resetInMs: 400 });
    now += 250;
    expect(await counter.hit('a', 400)).toEqual({ count: 1, resetInMs: 400 });
  });
});
