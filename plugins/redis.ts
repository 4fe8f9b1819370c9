// An ioredis client as `fastify.redis` when REDIS_URL is set (null otherwise), tuned to fail fast, never queue.
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { ThrottledLog } from '../src/logging/throttled-log.js';

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis | null;
    /** Why the Redis connection is down (its last error), or null while it is up or not configured. */
    redisConnectionError: () => Error | null;
  }
}

/** How long a command may wait for its answer; the rate limiter's fail-open budget is built on it. */
export const COMMAND_TIMEOUT_MS = 40;

export interface RedisPluginOptions {
  redisUrl?: string | undefined;
}

/**
 * Commands must not wait for a reconnect (no offline queue) nor hang on a slow server (command timeout): callers
 * such as the rate limiter fail open instead of holding the request. A server that stops answering on an open
 * connection would cost every command its full timeout: the socket timeout drops such a connection after one
 * timeout's silence, and until the reconnect succeeds commands fail at once (no offline queue).
 */
export function createRedis(url: string): Redis {
  return new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    socketTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    lazyConnect: true,
  });
}

/**
 * A connection of its own for SUBSCRIBE (a subscribed connection runs nothing else), made from the process's client:
 * unlike a command, its subscription waits for a reconnect rather than fail, has no answer time to keep, and is made
 * again after every reconnect (ioredis' autoResubscribe).
 */
export function subscriberOf(redis: Redis): Redis {
  return redis.duplicate({
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    commandTimeout: undefined,
    socketTimeout: undefined,
    enableAutoPipelining: false,
    lazyConnect: false,
  });
}

export default fp<RedisPluginOptions>(
  async (fastify, { redisUrl }) => {
    if (!redisUrl) {
      fastify.decorate('redis', null);
      fastify.decorate('redisConnectionError', () => null);
      return;
    }
    const redis = createRedis(redisUrl);
    // ioredis reports every reconnect attempt while Redis is down: one line per 10 s, and one when it is back.
    const logs = new ThrottledLog(fastify.log);
    // Kept from the first attempt on, so readiness can say why (a command fails with a generic "Stream isn't writeable").
    let connectionError: Error | null = null;
    fastify.decorate('redisConnectionError', () => connectionError);
    redis.on('error', (error: Error) => {
      connectionError = error;
      logs.warn('connection', { err: error }, 'redis connection error');
    });
    redis.on('ready', () => {
      connectionError = null;
      logs.recovered('connection', 'redis connection is back');
    });
    // Start without Redis if it is down: limits fail open and the client keeps reconnecting in the background.
    await redis.connect().catch((error: Error) => fastify.log.error({ err: error }, 'redis unavailable at start'));
    fastify.decorate('redis', redis);
    fastify.addHook('onClose', async () => {
      redis.disconnect();
    });
  },
  { name: 'redis', fastify: '5.x' },
);
