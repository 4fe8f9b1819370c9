// Requests per minute per API key with @fastify/rate-limit: Redis when configured (shared by replicas), else in
// process. A Redis failure fails open within the client's command timeout, and is logged and counted. A key this
// process saw over its limit is refused without Redis until its fixed window ends (the count can only have grown);
// every other request is counted in Redis.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { createRequire } from 'node:module';
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit';
import { AppError } from '../errors.js';
import { RefusedKeys } from '../rate-limit/refused-keys.js';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;
interface InnerStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): InnerStore;
}
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => InnerStore;

interface StoreFlags {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}

/**
 * The plugin's own Redis store (its Lua script), observed: @fastify/rate-limit swallows store errors (skipOnError).
 * A key Redis reported over its limit is refused in process until its window ends (RefusedKeys); a lost connection
 * (Redis restarted, perhaps empty) forgets them all.
 */
function observedRedisStore(redis: Redis, onError: (error: Error) => void) {
  const memories = new Set<RefusedKeys>();
  redis.on('close', () => {
    for (const memory of memories) memory.clear();
  });
  const wrap = (inner: InnerStore, { continueExceeding, exponentialBackoff }: StoreFlags): FastifyRateLimitStore => {
    // Only fixed windows can be remembered: the other modes move the expiry on every refused request.
    const refused = continueExceeding || exponentialBackoff ? null : new RefusedKeys();
    if (refused) memories.add(refused);
    return {
      incr: (key, callback, timeWindow, max) => {
        const known = refused?.answer(key, max);
        if (known) return (callback as Callback)(null, known);
        const askedAt = refused?.now() ?? 0;
        inner.incr(key, (error, result) => {
          if (error) onError(error);
          else if (result) refused?.observe(key, max, askedAt, result);
          (callback as Callback)(error, result);
        }, timeWindow, max);
      },
      child: (routeOptions) => wrap(inner.child(routeOptions), routeOptions as StoreFlags),
    };
  };
  return class {
    constructor(options: FastifyRateLimitOptions & StoreFlags) {
      const flags = { continueExceeding: Boolean(options.continueExceeding), exponentialBackoff: Boolean(options.exponentialBackoff) };
      return wrap(new RedisStore(flags.continueExceeding, flags.exponentialBackoff, redis, 'oct:rl:'), flags);
    }
  } as unknown as new (options: FastifyRateLimitOptions) => FastifyRateLimitStore;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counters shared by the whole app (decorated at the root so the internal listener and tests can read them). */
    counters: { rateLimitStoreErrors: number };
  }
}

export interface RateLimitOptions {
  perMinute: number;
}

const WINDOW_MS = 60_000;
const LOG_EVERY_MS = 10_000;

/** The IETF draft's headers next to the common X-RateLimit-* ones. */
function addStandardHeaders(reply: FastifyReply) {
  const limit = reply.getHeader('x-ratelimit-limit');
  if (limit === undefined) return;
  const remaining = reply.getHeader('x-ratelimit-remaining') ?? 0;
  const reset = reply.getHeader('x-ratelimit-reset') ?? 0;
  reply.header('ratelimit-policy', `"per-key";q=${limit};w=${WINDOW_MS / 1000}`);
  reply.header('ratelimit', `"per-key";r=${remaining};t=${reset}`);
}

export default fp<RateLimitOptions>(
  async (fastify, { perMinute }) => {
    let lastLogged = 0;

    const onStoreError = (error: Error) => {
      const storeErrors = ++fastify.counters.rateLimitStoreErrors;
      if (Date.now() - lastLogged > LOG_EVERY_MS) {
        lastLogged = Date.now();
        fastify.log.error({ err: error, storeErrors }, 'rate-limit store unavailable; failing open');
      }
    };
    const store = fastify.redis ? observedRedisStore(fastify.redis, onStoreError) : undefined;

    await fastify.register(rateLimit, {
      global: true,
      max: perMinute,
      timeWindow: WINDOW_MS,
      hook: 'onRequest',
      ...(store ? { store } : {}),
      skipOnError: true,
      keyGenerator: (request) => request.principal?.keyId ?? `ip:${request.ip}`,
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return new AppError('RATE_LIMITED', { seconds }, { 'retry-after': String(seconds) });
      },
    });

    fastify.addHook('onSend', async (_request, reply, payload) => {
      addStandardHeaders(reply);
      return payload;
    });
  },
  { name: 'rate-limit', fastify: '5.x', dependencies: ['access', 'redis'] },
);
