// The in-process memory of rate-limit keys over their limit: answers only within the window the store reported,
// only for the same limit, and stays bounded.
import { describe, expect, it } from 'vitest';
import { RefusedKeys } from '../../src/rate-limit/refused-keys.js';

function withClock(capacity?: number) {
  let now = 1_000;
  const keys = new RefusedKeys(capacity, () => now);
  return {
    keys,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

describe('RefusedKeys', () => {
  it('remembers a key only once the store reports it over its limit', () => {
    const { keys, now } = withClock();
    keys.observe('k', 3, now(), { current: 3, ttl: 50_000 });
    expect(keys.answer('k', 3)).toBeNull();
    keys.observe('k', 3, now(), { current: 4, ttl: 50_000 });
    expect(keys.answer('k', 3)).toEqual({ current: 4, ttl: 50_000 });
  });

  it('counts the window from when the store was asked, and forgets the key when it ends', () => {
    const { keys, advance, now } = withClock();
    const askedAt = now();
    advance(30); // the store's answer took 30 ms to come back
    keys.observe('k', 3, askedAt, { current: 9, ttl: 2_000 });
    expect(keys.answer('k', 3)).toEqual({ current: 4, ttl: 1_970 });
    advance(1_969);
    expect(keys.answer('k', 3)).toEqual({ current: 4, ttl: 1 });
    advance(1);
    expect(keys.answer('k', 3)).toBeNull();
    expect(keys.size).toBe(0);
  });

  it('answers only for the same limit, and never for an answer without a window', () => {
    const { keys, now } = withClock();
    keys.observe('k', 3, now(), { current: 4, ttl: 10_000 });
    expect(keys.answer('k', 100)).toBeNull();
    expect(keys.answer('k', 3)).not.toBeNull();
    keys.observe('no-expiry', 3, now(), { current: 4, ttl: -1 });
    keys.observe('zero', 3, now(), { current: 4, ttl: 0 });
    expect(keys.answer('no-expiry', 3)).toBeNull();
    expect(keys.answer('zero', 3)).toBeNull();
  });

  it('stays bounded: expired keys make room first; when few have expired, everything is forgotten', () => {
    const { keys, advance, now } = withClock(10);
    for (let i = 0; i < 5; i++) keys.observe(`short${i}`, 3, now(), { current: 4, ttl: 100 });
    for (let i = 0; i < 5; i++) keys.observe(`long${i}`, 3, now(), { current: 4, ttl: 60_000 });
    expect(keys.size).toBe(10);
    advance(200);
    keys.observe('new', 3, now(), { current: 4, ttl: 60_000 });
    expect(keys.size).toBe(6);
    expect(keys.answer('long0', 3)).not.toBeNull();
    for (let i = 0; i < 4; i++) keys.observe(`more${i}`, 3, now(), { current: 4, ttl: 60_000 });
    expect(keys.size).toBe(10);
    keys.observe('overflow', 3, now(), { current: 4, ttl: 60_000 });
    expect(keys.size).toBe(1);
    expect(keys.answer('overflow', 3)).not.toBeNull();
    expect(keys.answer('long0', 3)).toBeNull();
  });

  it('clear() forgets every key', () => {
    const { keys, now } = withClock();
    keys.observe('k', 3, now(), { current: 4, ttl: 10_000 });
    keys.clear();
    expect(keys.answer('k', 3)).toBeNull();
  });
});
