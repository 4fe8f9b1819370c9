// Counts failed authentication attempts per client IP in fixed windows: in Redis when configured, else in memory.
import type { Redis } from 'ioredis';

export interface WindowCount { count: number; resetInMs: number }

export interface FailureCounter {
  /** Adds one failure and returns the new count. */
  hit(key: string): Promise<WindowCount>;
}

export class MemoryFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private readonly windowMs: number, private readonly now: () => number = Date.now) {}

  private current(key: string) {
    const entry = this.windows.get(key);
    if (!entry || entry.resetAt <= this.now()) {
      this.windows.delete(key);
      return null;
    }
    return entry;
  }

  async hit(key: string): Promise<WindowCount> {
    // Bound memory under a spray of addresses: expired windows are dropped as the map grows.
    if (this.windows.size > 10_000) for (const k of this.windows.keys()) this.current(k);
    const entry = this.current(key) ?? { count: 0, resetAt: this.now() + this.windowMs };
    entry.count += 1;
    this.windows.set(key, entry);
    return { count: entry.count, resetInMs: entry.resetAt - this.now() };
  }
}

/**
 * One fixed window per key, in one command (a script runs atomically): the expiry is set by the first failure only.
 * The MULTI/SET NX/INCR/PTTL/EXEC it replaces sent five commands per failure.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

type WithHit = Redis & { octAuthFailureHit(key: string, windowMs: number): Promise<[number, number]> };

export class RedisFailureCounter implements FailureCounter {
  private readonly redis: WithHit;

  constructor(redis: Redis, private readonly windowMs: number, private readonly prefix = 'oct:auth-fail:') {
    // EVALSHA, loading the script when the server does not know it yet.
    if (!('octAuthFailureHit' in redis)) redis.defineCommand('octAuthFailureHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis = redis as WithHit;
  }

  async hit(key: string): Promise<WindowCount> {
    const [count, ttl] = await this.redis.octAuthFailureHit(this.prefix + key, this.windowMs);
    return { count: Number(count), resetInMs: Math.max(0, Number(ttl)) };
  }
}
