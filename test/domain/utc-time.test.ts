// Times as people read them: one UTC format for the dashboard and callctl (an invitation's expiry reads the same
// whichever sent it).
import { describe, expect, it } from 'vitest';
import { formatMinute, formatTime } from '../../src/domain/utc-time.js';

describe('UTC times', () => {
  const at = new Date('2054-11-23T10:42:07.891Z');

  it('formatTime: to the second, milliseconds dropped, not rounded', () => {
    expect(formatTime(at)).toBe('2054-11-23 10:42:07 UTC');
    expect(formatTime(new Date('2054-01-02T03:04:05Z'))).toBe('2054-01-02 03:04:05 UTC');
  });

  it('formatMinute: to the minute, seconds dropped', () => {
    expect(formatMinute(at)).toBe('2054-11-23 10:42 UTC');
  });
});
