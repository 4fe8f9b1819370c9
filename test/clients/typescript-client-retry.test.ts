// The TypeScript client's waits between attempts, as plain functions: Retry-After in both of its forms (the server
// sends seconds; a proxy in front may send an HTTP date), the capped backoff with its jitter, and when to stop. The
// retries themselves are tested against the real server (typescript-client.test.ts).
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  DEFAULT_RETRY,
  nextDelayMs,
  parseRetryAfter,
  retryPolicy,
} from '../../clients/typescript/src/retry.js';

const NOW = Date.parse('2055-10-21T07:28:00Z');
const policy = retryPolicy({ maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 });

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP dates; a past date means now; anything else is no header', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('Thu, 21 Oct 2055 07:28:02 GMT', NOW)).toBe(2_000);
    expect(parseRetryAfter('Thu, 21 Oct 2055 07:27:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter('-5', NOW)).toBeNull();
  });
});

describe('waits', () => {
  it('back off exponentially from baseDelayMs, capped at maxDelayMs, between half and all of each step', () => {
    const steps = [1, 2, 3, 4, 5].map((attempt) => [
      backoffMs(attempt, policy, () => 0),
      backoffMs(attempt, policy, () => 1),
    ]);
    expect(steps).toEqual([
      [50, 100],
      [100, 200],
      [200, 400],
      [400, 800],
      [500, 1_000],
    ]);
  });

  it('wait at least Retry-After, give up when it is beyond maxDelayMs, and stop after maxAttempts', () => {
    expect(nextDelayMs(1, 800, policy, () => 0)).toBe(800);
    expect(nextDelayMs(1, 800, policy, () => 1)).toBe(880);
    expect(nextDelayMs(1, 1_001, policy, () => 0)).toBeNull();
    expect(nextDelayMs(4, null, policy, () => 0)).toBe(400);
    expect(nextDelayMs(5, null, policy, () => 0)).toBeNull();
    expect(nextDelayMs(5, 0, policy, () => 0)).toBeNull();
  });

  it('defaults to 4 attempts from 500 ms, capped at the rate-limit window; refuses nonsense', () => {
    expect(retryPolicy()).toEqual(DEFAULT_RETRY);
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 60_000 });
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => retryPolicy({ baseDelayMs: -1 })).toThrow(RangeError);
    expect(() => retryPolicy({ maxDelayMs: Number.NaN })).toThrow(RangeError);
  });
});
