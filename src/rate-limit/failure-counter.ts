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

export class RedisFailureCounter implements FailureCounter {
  constructor(private readonly redis: Redis, private readonly windowMs: number, private readonly prefix = 'oct:auth-fail:') {}

  async hit(key: string): Promise<WindowCount> {
    const k = this.prefix + key;
    const result = await this.redis.multi().set(k, 0, 'PX', this.windowMs, 'NX').incr(k).pttl(k).exec();
    return { count: Number(result?.[1]?.[1] ?? 0), resetInMs: Math.max(0, Number(result?.[2]?.[1] ?? 0)) };
  }
}
