// The per-key rate limit's store in Redis, given to @fastify/rate-limit through its documented `store` option: one
// fixed-window command per request, shared by every replica; a key Redis reported over its limit is refused in
// process until its window ends (RefusedKeys), and a lost connection forgets those.
import type {
  FastifyRateLimitOptions,
  FastifyRateLimitStore,
  FastifyRateLimitStoreCtor,
  RateLimitOptions,
} from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { RedisFixedWindow } from './fixed-window.js';
import { RefusedKeys, type StoreAnswer } from './refused-keys.js';

/** Told of every store call's outcome: @fastify/rate-limit lets a request through on a store error (skipOnError). */
export interface StoreObserver {
  failed(error: Error): void;
  answered(): void;
}

type Callback = (error: Error | null, result?: StoreAnswer) => void;
type Modes = Pick<RateLimitOptions, 'continueExceeding' | 'exponentialBackoff'>;

export function redisRateLimitStore(
  redis: Redis,
  observer: StoreObserver,
  prefix = 'oct:rl:',
): FastifyRateLimitStoreCtor {
  const counter = new RedisFixedWindow(redis, prefix);
  // One memory for every route's key space (their keys differ: see child).
  const refused = new RefusedKeys();
  // Redis restarted (perhaps empty) or the connection was dropped: what it answered may no longer hold.
  redis.on('close', () => refused.clear());

  class FixedWindowRedisStore implements FastifyRateLimitStore {
    constructor(
      options: FastifyRateLimitOptions,
      private readonly routeKey = '',
    ) {
      // Remembered refusals need fixed windows: the other modes move the expiry on every refused request.
      const { continueExceeding, exponentialBackoff } = options as Modes;
      if (continueExceeding || exponentialBackoff)
        throw new Error('the Redis rate-limit store counts fixed windows only');
    }

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      const fullKey = this.routeKey + key;
      const known = refused.answer(fullKey, max);
      if (known) return callback(null, known);
      const askedAt = refused.now();
      counter.hit(fullKey, timeWindow).then(
        ({ count, resetInMs }) => {
          const answer = { current: count, ttl: resetInMs };
          observer.answered();
          refused.observe(fullKey, max, askedAt, answer);
          callback(null, answer);
        },
        (error: Error) => {
          observer.failed(error);
          callback(error);
        },
      );
    }

    /** A route with a limit of its own counts in its own key space, as the library's stores do. */
    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      // routeInfo: documented in the README's custom-store section, missing from the types.
      const { routeInfo } = routeOptions as unknown as { routeInfo: { method: string; url: string } };
      return new FixedWindowRedisStore(routeOptions, `${this.routeKey}${routeInfo.method}${routeInfo.url}-`);
    }
  }
  return FixedWindowRedisStore;
}
