// An ioredis client as `fastify.redis` when REDIS_URL is set (null otherwise), tuned to fail fast, never queue.
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis | null;
  }
}

export interface RedisPluginOptions {
  redisUrl?: string | undefined;
}

/**
 * Commands must not wait for a reconnect (no offline queue) nor hang on a slow server (command timeout):
 * callers such as the rate limiter fail open instead of holding the request.
 */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    commandTimeout: 40,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    lazyConnect: true,
  });
  // A server that stops answering on an open connection would cost every command its full timeout. After one
  // timeout, drop the connection: until the reconnect succeeds, commands fail at once (no offline queue).
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: Parameters<typeof send>[0], stream?: Parameters<typeof send>[1]) => {
    const result = send(command, stream);
    command.promise.catch((error: Error) => {
      if (error.message === 'Command timed out' && redis.status === 'ready') redis.disconnect(true);
    });
    return result;
  }) as typeof redis.sendCommand;
  return redis;
}

export default fp<RedisPluginOptions>(
  async (fastify, { redisUrl }) => {
    if (!redisUrl) {
      fastify.decorate('redis', null);
      return;
    }
    const redis = createRedis(redisUrl);
    redis.on('error', (error: Error) => fastify.log.warn({ err: error }, 'redis connection error'));
    // Start without Redis if it is down: limits fail open and the client keeps reconnecting in the background.
    await redis.connect().catch((error: Error) => fastify.log.error({ err: error }, 'redis unavailable at start'));
    fastify.decorate('redis', redis);
    fastify.addHook('onClose', async () => {
      redis.disconnect();
    });
  },
  { name: 'redis', fastify: '5.x' },
);
