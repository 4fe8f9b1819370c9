// One spelling of each time zone (issue 45, point 6): any spelling of a zone (any case, blanks around it, a link) is
// read as its canonical IANA name, or refused, before luxon sees it, so the zone objects luxon keeps for good (one per
// name it is given) stay bounded by the tz database, however many spellings arrive.
import { IANAZone } from 'luxon';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isWithinCallingWindow, nextWindowOpening, parseCallingWindow } from '../../src/domain/calling-window.js';
import { canonicalTimeZone, ZONE_REGIONS } from '../../src/domain/time-zones.js';

/** Every spelling of `name` in upper and lower case: 2^letters of them (america/new_york: 14 letters, 16,384). */
function caseSpellings(name: string): string[] {
  let spellings = [''];
  for (const c of name.toLowerCase()) {
    const both = c === c.toUpperCase() ? [c] : [c, c.toUpperCase()];
    spellings = spellings.flatMap((s) => both.map((b) => s + b));
  }
  return spellings;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('canonicalTimeZone', () => {
  it('reads a zone in any case, blanks around it, and links as the canonical name', () => {
    const cases: [string, string][] = [
      ['america/new_york', 'America/New_York'],
      ['AMERICA/NEW_YORK', 'America/New_York'],
      ['  America/New_York\t', 'America/New_York'],
      ['US/Eastern', 'America/New_York'],
      ['us/eastern', 'America/New_York'],
      ['Asia/Calcutta', 'Asia/Kolkata'],
      ['europe/kiev', 'Europe/Kyiv'],
      ['Etc/UTC', 'UTC'],
      ['utc', 'UTC'],
      ['GMT', 'UTC'],
      ['Etc/GMT+5', 'Etc/GMT+5'],
    ];
    for (const [given, canonical] of cases) expect(canonicalTimeZone(given), given).toBe(canonical);
  });

  it('refuses what names no zone: offsets, blanks, made-up names', () => {
    for (const text of ['', '   ', '+05:00', '-0300', 'Mars/Olympus_Mons', 'America/New York', 'Factory', 'EST5'])
      expect(canonicalTimeZone(text), JSON.stringify(text)).toBeNull();
  });

  it('gives every zone the form offers as itself', () => {
    for (const zone of ZONE_REGIONS.flatMap((r) => r.zones)) expect(canonicalTimeZone(zone.value)).toBe(zone.value);
  });
});

describe("luxon's zones", () => {
  it('16,384 spellings of one zone hand luxon one name, so its cache of zone objects stays bounded', () => {
    const spellings = caseSpellings('america/new_york');
    expect(new Set(spellings).size).toBe(16_384);
    const created = vi.spyOn(IANAZone, 'create');
    const weekdays = [parseCallingWindow('mon-fri 09:00-17:00')];
    const at = new Date('2054-12-05T12:00:00Z'); // a Saturday: nextWindowOpening looks ahead
    const opens = new Date('2054-12-07T14:00:00Z').getTime();
    let wrong = 0;
    spellings.forEach((spelling, i) => {
      if (isWithinCallingWindow(weekdays, spelling, at)) wrong++;
      // The next opening's search is dearer: every 16th spelling (the same path to luxon).
      if (i % 16 === 0 && nextWindowOpening(weekdays, spelling, at)?.getTime() !== opens) wrong++;
    });
    expect(wrong).toBe(0);
    // Luxon keeps a zone object per name it is given, for good: it was given America/New_York at most (not at all
    // when an earlier test of this process made it), never one of the other 16,383 spellings.
    const names = new Set(created.mock.calls.map(([name]) => name));
    expect([...names].filter((n) => n !== 'America/New_York')).toEqual([]);
  });

  it('a link and the zone it names are one zone object', () => {
    const created = vi.spyOn(IANAZone, 'create');
    const always = [parseCallingWindow('daily 00:00-24:00')];
    for (const name of ['Asia/Calcutta', 'asia/kolkata', 'ASIA/CALCUTTA', 'Asia/Kolkata'])
      expect(isWithinCallingWindow(always, name, new Date())).toBe(true);
    const names = new Set(created.mock.calls.map(([name]) => name));
    expect([...names].filter((n) => n !== 'Asia/Kolkata')).toEqual([]);
  });
});
