// Fixed-window counts (the expiry set by a window's first hit, never moved): in Redis, one script per hit, shared by
// the per-key rate limit (src/rate-limit/redis-store.ts) and the failed-authentication throttle; or in process.
import type { Redis } from 'ioredis';

export interface WindowCount {
  count: number;
  resetInMs: number;
}

export interface FixedWindowCounter {
  /** Adds one hit to `key`'s current window (opening a `windowMs` one if there is none) and returns its count. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
}

export class MemoryFixedWindow implements FixedWindowCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  private current(key: string) {
    const entry = this.windows.get(key);
    if (!entry || entry.resetAt <= this.now()) {
      this.windows.delete(key);
      return null;
    }
    return entry;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    // Bound memory under a spray of keys: expired windows are dropped as the map grows.
    if (this.windows.size > 10_000) for (const k of this.windows.keys()) this.current(k);
    const entry = this.current(key) ?? { count: 0, resetAt: this.now() + windowMs };
    entry.count += 1;
    this.windows.set(key, entry);
    return { count: entry.count, resetInMs: entry.resetAt - this.now() };
  }
}

/**
 * One command per hit (a script runs atomically): INCR, and PEXPIRE when the key has no expiry yet, which is the
 * window's first hit (or a key whose expiry was lost: it gets one rather than counting forever).
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

type WithHit = Redis & { octFixedWindowHit(key: string, windowMs: number): Promise<[number, number]> };

/**
 * Counts in Redis under `prefix` + key, shared by every replica on that Redis. Errors (Redis down, a command timeout)
 * reject: callers fail open. A silent connection is dropped by the client itself (createRedis' socketTimeout).
 */
export class RedisFixedWindow implements FixedWindowCounter {
  private readonly redis: WithHit;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    // EVALSHA, loading the script when the server does not know it yet (ioredis' defineCommand).
    if (!('octFixedWindowHit' in redis)) redis.defineCommand('octFixedWindowHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis = redis as WithHit;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = await this.redis.octFixedWindowHit(this.prefix + key, windowMs);
    return { count: Number(count), resetInMs: Math.max(0, Number(ttl)) };
  }
}
