// Requests per minute per API key, with Retry-After, through @fastify/rate-limit: with Redis, its `store` is ours
// (src/rate-limit/redis-store.ts: one budget shared by replicas); without, the plugin's own in-process store. A Redis
// failure fails open within the client's command timeout, counted in the metrics and logged.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../src/errors.js';
import { ThrottledLog } from '../src/logging/throttled-log.js';
import { redisRateLimitStore } from '../src/rate-limit/redis-store.js';

export interface RateLimitOptions {
  perMinute: number;
  /** Whose budget a request spends: the API key's (default; the client IP's before a key is known). */
  keyOf?: (request: FastifyRequest) => string;
  /** The budget's name in the RateLimit-Policy header. */
  policy?: string;
}

const WINDOW_MS = 60_000;

/** The IETF draft's headers next to the common X-RateLimit-* ones. */
function addStandardHeaders(reply: FastifyReply, policy: string) {
  const limit = reply.getHeader('x-ratelimit-limit');
  if (limit === undefined) return;
  const remaining = reply.getHeader('x-ratelimit-remaining') ?? 0;
  const reset = reply.getHeader('x-ratelimit-reset') ?? 0;
  reply.header('ratelimit-policy', `"${policy}";q=${String(limit)};w=${WINDOW_MS / 1000}`);
  reply.header('ratelimit', `"${policy}";r=${String(remaining)};t=${String(reset)}`);
}

export default fp<RateLimitOptions>(
  async (
    fastify,
    { perMinute, keyOf = (request) => request.principal?.keyId ?? `ip:${request.ip}`, policy = 'per-key' },
  ) => {
    // While Redis is down every request meets the error: one line per 10 s, and one when it answers again.
    const logs = new ThrottledLog(fastify.log);
    const store = fastify.redis
      ? redisRateLimitStore(fastify.redis, {
          failed: (error) => {
            fastify.metrics.rateLimitStoreErrors.inc();
            logs.error('store', { err: error }, 'rate-limit store unavailable; failing open');
          },
          answered: () => logs.recovered('store', 'rate-limit store answers again'),
        })
      : undefined;

    await fastify.register(rateLimit, {
      global: true,
      max: perMinute,
      timeWindow: WINDOW_MS,
      hook: 'onRequest',
      ...(store ? { store } : {}),
      skipOnError: true,
      keyGenerator: keyOf,
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return new AppError('RATE_LIMITED', { seconds }, { 'retry-after': String(seconds) });
      },
    });

    fastify.addHook('onSend', async (_request, reply, payload) => {
      addStandardHeaders(reply, policy);
      return payload;
    });
  },
  // After access in the API's scope (src/app.ts registers it so): a refused key spends no budget.
  { name: 'rate-limit', fastify: '5.x', dependencies: ['redis', 'metrics'] },
);
