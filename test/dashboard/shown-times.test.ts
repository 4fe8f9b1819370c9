// The dashboard's times in a user's zone (src/views/format/shown-times.ts): wall time and abbreviation on both sides
// of a change of the clocks, UTC as before for a user without a zone, and a typed day or minute read in the zone:
// 23 and 25 hours on the days the clocks change.
import { describe, expect, it } from 'vitest';
import { ShownTimes, UTC_TIMES } from '../../src/views/format/shown-times.js';

const at = (iso: string) => new Date(iso);
const paris = new ShownTimes('Europe/Paris');

describe('writing a moment', () => {
  it('writes UTC as callctl does for a user without a zone (the strings every older test asserts)', () => {
    expect(new ShownTimes(null).time(at('2054-11-23T10:42:07.123Z'))).toBe('2054-11-23 10:42:07 UTC');
    expect(new ShownTimes('UTC').minute(at('2054-11-23T10:42:07Z'))).toBe('2054-11-23 10:42 UTC');
    expect(UTC_TIMES.utc).toBe(true);
  });

  it("writes the zone's wall time and abbreviation, the summer's and the winter's", () => {
    expect(paris.time(at('2054-01-15T12:00:00Z'))).toBe('2054-01-15 13:00:00 CET');
    expect(paris.time(at('2054-07-15T12:00:00Z'))).toBe('2054-07-15 14:00:00 CEST');
    const newYork = new ShownTimes('America/New_York');
    expect(newYork.time(at('2054-01-15T12:00:00Z'))).toBe('2054-01-15 07:00:00 EST');
    expect(newYork.minute(at('2054-07-15T12:00:00Z'))).toBe('2054-07-15 08:00 EDT');
    expect(new ShownTimes('Europe/London').time(at('2054-07-15T12:00:00Z'))).toBe('2054-07-15 13:00:00 BST');
    // A zone without an English abbreviation: its offset, which names it without doubt.
    expect(new ShownTimes('Asia/Kolkata').time(at('2054-01-15T12:00:00Z'))).toBe('2054-01-15 17:30:00 GMT+5:30');
  });

  it('crosses midnight into the next day and keeps 00 for the first hour', () => {
    expect(new ShownTimes('Asia/Tokyo').time(at('2054-12-31T15:30:00Z'))).toBe('2055-01-01 00:30:00 GMT+9');
    expect(paris.day(at('2054-03-28T23:30:00Z'))).toBe('2054-03-29');
    expect(paris.typed(at('2054-03-28T23:30:00Z'))).toBe('2054-03-29T00:30');
  });

  it('shows a zone the runtime does not know (one stored by hand) in UTC', () => {
    const unknown = new ShownTimes('Mars/Olympus');
    expect(unknown.utc).toBe(true);
    expect(unknown.time(at('2054-11-23T10:42:07Z'))).toBe('2054-11-23 10:42:07 UTC');
  });

  it("adds a call's own wall time when its zone is not the one shown", () => {
    const moment = at('2054-11-23T14:00:00Z');
    expect(paris.withLocal(moment, 'America/New_York')).toBe('2054-11-23 15:00:00 CET (Mon 09:00 America/New_York)');
    expect(paris.withLocal(moment, 'Europe/Paris')).toBe('2054-11-23 15:00:00 CET');
    expect(UTC_TIMES.withLocal(moment, 'UTC')).toBe('2054-11-23 14:00:00 UTC');
    expect(UTC_TIMES.withLocal(moment, null)).toBe('2054-11-23 14:00:00 UTC');
  });
});

describe('reading a typed day or minute', () => {
  const hours = (from: Date | null, to: Date | null) => (to!.getTime() - from!.getTime()) / 3_600_000;

  it('reads a day from local midnight to local midnight: 23 hours in spring, 25 in autumn', () => {
    expect(paris.parse('2054-03-29')).toEqual(at('2054-03-28T23:00:00Z'));
    expect(paris.parse('2054-03-29', true)).toEqual(at('2054-03-29T22:00:00Z'));
    expect(hours(paris.parse('2054-03-29'), paris.parse('2054-03-29', true))).toBe(23);
    expect(hours(paris.parse('2054-10-25'), paris.parse('2054-10-25', true))).toBe(25);
    expect(hours(paris.parse('2054-11-23'), paris.parse('2054-11-23', true))).toBe(24);
  });

  it('reads a minute in the zone, and To includes its whole minute', () => {
    expect(paris.parse('2054-07-15T14:00')).toEqual(at('2054-07-15T12:00:00Z'));
    expect(paris.parse(' 2054-07-15 14:00 ', true)).toEqual(at('2054-07-15T12:01:00Z'));
    expect(paris.parse('2054-07-15T14:00:30', true)).toEqual(at('2054-07-15T12:00:31Z'));
  });

  it('reads UTC as before for a user without a zone', () => {
    expect(UTC_TIMES.parse('2054-11-23')).toEqual(at('2054-11-23T00:00:00Z'));
    expect(UTC_TIMES.parse('2054-11-23', true)).toEqual(at('2054-11-24T00:00:00Z'));
  });

  it('refuses what is no day or time', () => {
    for (const value of ['2054-02-30', '2054-11-23T24:00', '2054-13-01', '23/11/2054', '2054-11-23T10:61', ''])
      expect(paris.parse(value), value).toBeNull();
  });
});
