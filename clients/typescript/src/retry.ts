// When triggerCall tries again: which outcomes are retried, how long to wait (Retry-After, else capped exponential
// backoff with jitter), and a sleep that an AbortSignal ends.

export interface RetryOptions {
  /** Requests per logical call, the first included (1 turns retries off). Default 4. */
  maxAttempts?: number;
  /** The first backoff step in milliseconds; each further step doubles it. Default 500. */
  baseDelayMs?: number;
  /**
   * The longest wait in milliseconds: backoff steps are capped at it, and a Retry-After beyond it ends the retries
   * (the error carries retryAfterMs). Default 60,000, the server's rate-limit window.
   */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 60_000 };

/** The options with defaults filled in; refuses values that would make no sense rather than guess. */
export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...options };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RangeError('retry.maxAttempts must be an integer of at least 1');
  }
  for (const name of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(policy[name]) || policy[name] < 0) throw new RangeError(`retry.${name} must be 0 or more`);
  }
  return policy;
}

/** The statuses worth sending again unchanged: too many requests, and the service briefly unavailable. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Retry-After in milliseconds from now: delay-seconds ("120") or an HTTP date ("Wed, 21 Oct 2055 07:28:00 GMT");
 * null when absent or unreadable. A date in the past means now.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date starts with the day's name (all three of RFC 9110's forms do); Date.parse alone takes "-5" for a year.
  const at = /^[A-Za-z]{3}\b/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The wait before attempt `attempt + 1` when the server said nothing: base * 2^(attempt-1), capped, of which a random
 * half is waited ("equal jitter": never zero, and clients that failed together spread out).
 */
export function backoffMs(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return step / 2 + random() * (step / 2);
}

/**
 * The wait before the next attempt, or null to stop: at least Retry-After when the server gave one (plus up to a
 * tenth of it, or of a second, so that clients told the same instant do not return together), else the backoff.
 */
export function nextDelayMs(
  attempt: number,
  retryAfterMs: number | null,
  policy: RetryPolicy,
  random = Math.random,
): number | null {
  if (attempt >= policy.maxAttempts) return null;
  if (retryAfterMs === null) return backoffMs(attempt, policy, random);
  if (retryAfterMs > policy.maxDelayMs) return null;
  return retryAfterMs + random() * Math.min(retryAfterMs / 10, 1000);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
