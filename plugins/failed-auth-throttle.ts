// Failed authentication per client IP: beyond AUTH_FAILURES_PER_MINUTE failures in a fixed minute, further failures
// are answered 429 instead of 401 (valid keys are never counted nor slowed). Counted in Redis when configured (shared
// by replicas), else in process; a Redis failure fails open (401) and is logged.
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';
import type { ErrorCode } from '../schemas/error-codes.js';
import { ThrottledLog } from '../src/logging/throttled-log.js';
import { MemoryFixedWindow, RedisFixedWindow, type FixedWindowCounter } from '../src/rate-limit/fixed-window.js';

declare module 'fastify' {
  interface FastifyInstance {
    failedAuth: {
      /** Counts a failed attempt from `ip` and returns its refusal: 401, or 429 with Retry-After beyond the limit. */
      refusal(ip: string): Promise<AppError>;
    };
  }
}

export interface FailedAuthThrottleOptions {
  /** Failed attempts per client IP per minute before 429. */
  failuresPerMinute: number;
  /** The refusal below the limit: the API's invalid key (default), or the agent runtime's invalid context token. */
  invalid?: Extract<ErrorCode, 'INVALID_API_KEY' | 'INVALID_CONTEXT_TOKEN'>;
}

const WINDOW_MS = 60_000;

export default fp<FailedAuthThrottleOptions>(
  async (fastify, { failuresPerMinute, invalid = 'INVALID_API_KEY' }) => {
    const failures: FixedWindowCounter = fastify.redis
      ? new RedisFixedWindow(fastify.redis, 'oct:auth-fail:')
      : new MemoryFixedWindow();
    // While Redis is down every failed attempt meets the error: one line per 10 s, and one when it answers again.
    const logs = new ThrottledLog(fastify.log);
    const count = (ip: string) =>
      failures.hit(ip, WINDOW_MS).then(
        (seen) => {
          logs.recovered('counter', 'auth failure counter answers again');
          return seen;
        },
        (error: Error) => {
          // The throttle must not turn a Redis outage into refusals of its own: carry on unlimited.
          logs.warn('counter', { err: error }, 'auth failure counter unavailable');
          return { count: 0, resetInMs: 0 };
        },
      );

    fastify.decorate('failedAuth', {
      async refusal(ip: string) {
        const seen = await count(ip);
        if (seen.count <= failuresPerMinute) return new AppError(invalid);
        const seconds = Math.max(1, Math.ceil(seen.resetInMs / 1000));
        return new AppError('TOO_MANY_FAILED_AUTH', { seconds }, { 'retry-after': String(seconds) });
      },
    });
  },
  { name: 'failed-auth-throttle', fastify: '5.x', dependencies: ['errors', 'redis'] },
);
