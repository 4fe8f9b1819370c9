// The Redis store given to @fastify/rate-limit: fixed windows only, one key space per route with a limit of its own,
// store errors reported to its observer and passed on (the plugin then fails open).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit';
import { afterAll, describe, expect, it } from 'vitest';
import { redisRateLimitStore } from '../../src/rate-limit/redis-store.js';
import { redisUrl } from '../helpers/database.js';

const incr = (store: FastifyRateLimitStore, key: string, max = 3) =>
  new Promise<{ current: number; ttl: number }>((resolve, reject) =>
    store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), 60_000, max),
  );

describe.skipIf(!redisUrl())('redisRateLimitStore (requires Redis: TEST_REDIS_URL)', () => {
  const redis = new Redis(redisUrl() ?? '');
  afterAll(() => redis.disconnect());
  const observed = { failed: 0, answered: 0 };
  const observer = { failed: () => void observed.failed++, answered: () => void observed.answered++ };
  const options = {} as FastifyRateLimitOptions;

  it('counts fixed windows under its prefix; a route with its own limit counts in its own key space', async () => {
    const prefix = `oct:test:${randomBytes(4).toString('hex')}:`;
    const Store = redisRateLimitStore(redis, observer, prefix);
    const store = new Store(options);
    expect(await incr(store, 'key-1')).toEqual({ current: 1, ttl: 60_000 });
    expect((await incr(store, 'key-1')).current).toBe(2);
    expect(await redis.get(`${prefix}key-1`)).toBe('2');

    const child = store.child({ routeInfo: { method: 'POST', url: '/x' } } as never);
    expect((await incr(child, 'key-1')).current).toBe(1);
    expect(await redis.get(`${prefix}POST/x-key-1`)).toBe('1');
    expect(observed.answered).toBe(3);
  });

  it('refuses the modes that move the expiry (continueExceeding, exponentialBackoff)', () => {
    const Store = redisRateLimitStore(redis, observer, 'oct:test:');
    expect(() => new Store({ continueExceeding: true })).toThrow(/fixed windows only/);
    expect(() => new Store({ exponentialBackoff: true })).toThrow(/fixed windows only/);
  });

  it('reports a store error to its observer and passes it on', async () => {
    const closed = new Redis(redisUrl() ?? '', { lazyConnect: true, enableOfflineQueue: false });
    const Store = redisRateLimitStore(closed, observer, 'oct:test:');
    const before = observed.failed;
    await expect(incr(new Store(options), 'key')).rejects.toThrow(/enableOfflineQueue/);
    expect(observed.failed - before).toBe(1);
    closed.disconnect();
  });
});
