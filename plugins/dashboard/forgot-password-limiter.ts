// "Forgot your password?" requests throttled per client IP and per email (counters of their own, so that asking for
// links never uses up anyone's sign-in attempts). A refused request gets the same answer as any other and sends
// nothing: the limit protects people's mailboxes and the SMTP server, and reveals no address.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { ThrottledLog } from '../../src/logging/throttled-log.js';
import { MemoryFixedWindow, RedisFixedWindow, type FixedWindowCounter } from '../../src/rate-limit/fixed-window.js';

export const FORGOT_PASSWORD_LIMITS = {
  perIp: 10,
  perEmail: 3,
  windowMs: 60 * 60 * 1000,
} as const;

function emailKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a reset request; false when the IP or the email is over its limit (then nothing is sent). */
    forgotPasswordAttempt(ip: string, email: string): Promise<boolean>;
  }
}

export default fp(
  async (fastify) => {
    const counter: FixedWindowCounter = fastify.redis
      ? new RedisFixedWindow(fastify.redis, 'oct:forgot-password:')
      : new MemoryFixedWindow();
    const logs = new ThrottledLog(fastify.log);
    // A store outage refuses: unlike sign-in, nobody is locked out by a reset e-mail not being sent.
    const hit = (key: string) =>
      counter.hit(key, FORGOT_PASSWORD_LIMITS.windowMs).then(
        (seen) => {
          logs.recovered('forgot-password-counter', 'forgot-password limiter answers again');
          return seen.count;
        },
        (error: Error) => {
          logs.warn('forgot-password-counter', { err: error }, 'forgot-password limiter unavailable');
          return Number.POSITIVE_INFINITY;
        },
      );
    fastify.decorate('forgotPasswordAttempt', async (ip: string, email: string) => {
      const [byIp, byEmail] = await Promise.all([hit(`ip:${ip}`), hit(`email:${emailKey(email)}`)]);
      return byIp <= FORGOT_PASSWORD_LIMITS.perIp && byEmail <= FORGOT_PASSWORD_LIMITS.perEmail;
    });
  },
  { name: 'dashboard-forgot-password-limiter', fastify: '5.x', dependencies: ['redis'] },
);
