// scheduled_at against the clock: the limits exactly (5 minutes of skew behind, 30 days ahead) and what "now" means.
import { describe, expect, it } from 'vitest';
import { earliestDial, readScheduledAt } from '../../src/domain/call-schedule.js';

const now = new Date('2054-11-23T15:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

describe('readScheduledAt', () => {
  it.each([
    ['5 minutes behind (clock skew)', at(-5 * MIN)],
    ['now', at(0)],
    ['an hour ahead', at(60 * MIN)],
    ['exactly 30 days ahead', at(30 * DAY)],
  ])('accepts %s', (_name, text) => {
    expect(readScheduledAt(text, now)).toEqual({ ok: true, at: new Date(text) });
  });

  it('reads the offset: 20:30+05:30 is 15:00Z', () => {
    expect(readScheduledAt('2054-11-23T20:30:00+05:30', now)).toEqual({ ok: true, at: now });
  });

  it('refuses more than 5 minutes behind, and more than 30 days ahead', () => {
    expect(readScheduledAt(at(-5 * MIN - 1), now)).toEqual({
      ok: false,
      message: "scheduled_at must not be in the past (up to 5 minutes behind the server's clock is read as now)",
    });
    expect(readScheduledAt(at(30 * DAY + 1), now)).toEqual({
      ok: false,
      message: 'scheduled_at must be at most 30 days ahead',
    });
  });
});

describe('earliestDial', () => {
  it('the scheduled time when it is ahead; now for none or one within the skew', () => {
    expect(earliestDial(null, now)).toBe(now);
    expect(earliestDial(new Date(now.getTime() - MIN), now)).toBe(now);
    expect(earliestDial(new Date(now.getTime() + MIN), now)).toEqual(new Date(now.getTime() + MIN));
  });
});
