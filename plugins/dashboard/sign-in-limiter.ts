// Sign-in attempts throttled per client IP and per email through the fixed-window counter the API's failed-key
// throttle uses (Redis when configured, shared by replicas; else in process). Every attempt is counted before the
// password is checked, so a throttled caller learns nothing about the password, and both limits hold whether the
// email exists or not.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { ThrottledLog } from '../../src/logging/throttled-log.js';
import { MemoryFixedWindow, RedisFixedWindow, type FixedWindowCounter } from '../../src/rate-limit/fixed-window.js';

export const SIGN_IN_LIMITS = {
  /** Attempts per client IP per window (an office behind one address signs in many people). */
  perIp: 30,
  /** Attempts per email per window: guessing one person's password. */
  perEmail: 10,
  windowMs: 15 * 60 * 1000,
} as const;

/** Emails are not written to Redis as they are: a digest names the window. */
function emailKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
}

export type SignInVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a sign-in attempt (or a password re-entry) and says whether it may go on. */
    signInAttempt(ip: string, email: string): Promise<SignInVerdict>;
  }
}

export default fp(
  async (fastify) => {
    const counter: FixedWindowCounter = fastify.redis
      ? new RedisFixedWindow(fastify.redis, 'oct:sign-in:')
      : new MemoryFixedWindow();
    const logs = new ThrottledLog(fastify.log);
    // The limiter must not turn a Redis outage into refusals: on a store error, the attempt goes on unthrottled.
    const hit = (key: string) =>
      counter.hit(key, SIGN_IN_LIMITS.windowMs).then(
        (seen) => {
          logs.recovered('sign-in-counter', 'sign-in limiter answers again');
          return seen;
        },
        (error: Error) => {
          logs.warn('sign-in-counter', { err: error }, 'sign-in limiter unavailable');
          return { count: 0, resetInMs: 0 };
        },
      );
    fastify.decorate('signInAttempt', async (ip: string, email: string): Promise<SignInVerdict> => {
      const [byIp, byEmail] = await Promise.all([hit(`ip:${ip}`), hit(`email:${emailKey(email)}`)]);
      const over = [
        byIp.count > SIGN_IN_LIMITS.perIp ? byIp : null,
        byEmail.count > SIGN_IN_LIMITS.perEmail ? byEmail : null,
      ].filter((w) => w !== null);
      if (over.length === 0) return { allowed: true };
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...over.map((w) => w.resetInMs)) / 1000)),
      };
    });
  },
  { name: 'dashboard-sign-in-limiter', fastify: '5.x', dependencies: ['redis'] },
);
