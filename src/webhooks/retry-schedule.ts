// When to try a webhook delivery again: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h after each failure,
// with ±10% jitter so that a recovering receiver is not hit by every retry at once; Retry-After can only lengthen it.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
] as const;
/** The first attempt plus one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const MAX_RETRY_AFTER_MS = 24 * HOUR;

/**
 * Delay before the next attempt after `attemptsMade` failed attempts, or null when none is left.
 * `retryAfterMs` (from a 429/503's Retry-After) is honoured when it asks for longer than the schedule.
 */
export function nextAttemptDelay(
  attemptsMade: number,
  options: { random?: () => number; retryAfterMs?: number | null } = {},
): number | null {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * (options.random ?? Math.random)()));
  const asked = options.retryAfterMs != null ? Math.min(options.retryAfterMs, MAX_RETRY_AFTER_MS) : 0;
  return Math.max(jittered, asked);
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * SECOND;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}

export type AttemptOutcome = 'succeeded' | 'retry' | 'gone';

/** Only 2xx is success; 410 Gone disables the endpoint; anything else (3xx included: no redirects) is retried. */
export function classifyStatus(status: number | null): AttemptOutcome {
  if (status !== null && status >= 200 && status < 300) return 'succeeded';
  if (status === 410) return 'gone';
  return 'retry';
}
