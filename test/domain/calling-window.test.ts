// Table-driven tests for calling-window parsing, formatting, stored-JSON validation and open/next-opening evaluation (incl. DST).
import { Settings } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  CallingWindowError,
  callingWindowsSchemaCheck,
  formatCallingWindow,
  isValidTimeZone,
  isWithinCallingWindow,
  nextWindowOpening,
  parseCallingWindow,
} from '../../src/domain/calling-window.js';
import type { CallingWindow } from '../../src/domain/calling-window.js';

const NY = 'America/New_York';
const LON = 'Europe/London';
const SYD = 'Australia/Sydney';
// Expected instants are written with explicit offsets / Z so the tests don't lean on luxon's own resolution.
const at = (iso: string): Date => new Date(iso);
const windows = (...texts: string[]): CallingWindow[] => texts.map(parseCallingWindow);

function errorOf(fn: () => unknown): CallingWindowError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CallingWindowError);
    return err as CallingWindowError;
  }
  throw new Error('expected a CallingWindowError');
}

describe('parseCallingWindow', () => {
  it.each<[string, number[], string, string]>([
    ['mon-fri 09:00-17:00', [1, 2, 3, 4, 5], '09:00', '17:00'],
    ['MON-Fri 09:00-17:00', [1, 2, 3, 4, 5], '09:00', '17:00'],
    ['fri-mon 10:00-14:00', [1, 5, 6, 7], '10:00', '14:00'],
    ['sat,sun 10:00-16:00', [6, 7], '10:00', '16:00'],
    ['mon,wed,fri 08:30-12:00', [1, 3, 5], '08:30', '12:00'],
    ['wed,mon,mon 09:00-10:00', [1, 3], '09:00', '10:00'],
    ['mon-wed,fri 09:00-10:00', [1, 2, 3, 5], '09:00', '10:00'],
    ['tue 08:00-20:00', [2], '08:00', '20:00'],
    ['daily 00:00-24:00', [1, 2, 3, 4, 5, 6, 7], '00:00', '24:00'],
    ['Daily 09:00-17:00', [1, 2, 3, 4, 5, 6, 7], '09:00', '17:00'],
    ['mon-sun 09:00-17:00', [1, 2, 3, 4, 5, 6, 7], '09:00', '17:00'],
    ['sun-sat 09:00-17:00', [1, 2, 3, 4, 5, 6, 7], '09:00', '17:00'],
    ['fri 22:00-06:00', [5], '22:00', '06:00'],
    ['sat 22:00-00:00', [6], '22:00', '00:00'],
    ['thu 00:00-23:59', [4], '00:00', '23:59'],
    ['  sun   21:00 - 23:30  ', [7], '21:00', '23:30'],
  ])('%j', (text, days, start, end) => {
    expect(parseCallingWindow(text)).toEqual({ days, start, end });
  });

  it.each<[string, string]>([
    ['', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['mon-fri', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['mon-fri 9-17', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['mon-fri 9:00-17:00', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['mon-fri 09:00', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['09:00-17:00', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['mon 09:00-17:00 extra', 'expected "<days> <HH:MM>-<HH:MM>"'],
    ['monday 09:00-17:00', 'unknown days "monday"'],
    ['mon-xyz 09:00-17:00', 'unknown days "mon-xyz"'],
    ['mon-tue-wed 09:00-17:00', 'unknown days "mon-tue-wed"'],
    ['mon,,fri 09:00-17:00', 'unknown days ""'],
    ['daily,mon 09:00-10:00', 'unknown days "daily"'],
    ['mon 24:00-10:00', 'invalid start time "24:00"'],
    ['mon 25:00-26:00', 'invalid start time "25:00"'],
    ['mon 09:60-10:00', 'invalid start time "09:60"'],
    ['mon 09:00-24:01', 'invalid end time "24:01"'],
    ['mon 09:00-30:00', 'invalid end time "30:00"'],
    ['mon 09:00-09:00', 'start and end are both "09:00"'],
  ])('rejects %j', (text, why) => {
    const err = errorOf(() => parseCallingWindow(text));
    expect(err.message.startsWith(`Invalid calling window "${text}": `)).toBe(true);
    expect(err.message).toContain(why);
  });
});

describe('formatCallingWindow', () => {
  it.each<[string, string]>([
    ['mon-fri 09:00-17:00', 'mon-fri 09:00-17:00'],
    ['MON-FRI 09:00-17:00', 'mon-fri 09:00-17:00'],
    ['mon,tue,wed,thu,fri 09:00-17:00', 'mon-fri 09:00-17:00'],
    ['fri-mon 10:00-14:00', 'fri-mon 10:00-14:00'],
    ['sat-mon 22:00-06:00', 'sat-mon 22:00-06:00'],
    ['sat,sun 10:00-16:00', 'sat,sun 10:00-16:00'],
    ['sat-sun 10:00-16:00', 'sat,sun 10:00-16:00'],
    ['sun,mon 09:00-10:00', 'sun,mon 09:00-10:00'],
    ['mon,wed,fri 08:30-12:00', 'mon,wed,fri 08:30-12:00'],
    ['tue 08:00-20:00', 'tue 08:00-20:00'],
    ['mon-wed,fri 09:00-10:00', 'mon-wed,fri 09:00-10:00'],
    ['mon,tue,thu,fri,sat 09:00-10:00', 'mon,tue,thu-sat 09:00-10:00'],
    ['mon-sun 09:00-17:00', 'daily 09:00-17:00'],
    ['daily 00:00-24:00', 'daily 00:00-24:00'],
    ['fri 22:00-00:00', 'fri 22:00-00:00'],
  ])('%j formats as %j and round-trips', (text, formatted) => {
    const parsed = parseCallingWindow(text);
    expect(formatCallingWindow(parsed)).toBe(formatted);
    expect(parseCallingWindow(formatted)).toEqual(parsed);
    // What we store must pass the DB-read check unchanged.
    expect(callingWindowsSchemaCheck(JSON.parse(JSON.stringify([parsed])))).toEqual([parsed]);
  });
});

describe('isWithinCallingWindow', () => {
  // January 2054 in New York is EST (-05:00): Mon 5th .. Sun 11th, Mon 12th.
  it.each<[string, string[], string, string, boolean]>([
    ['start is open', ['mon-fri 09:00-17:00'], NY, '2054-01-05T09:00:00.000-05:00', true],
    ['just before start', ['mon-fri 09:00-17:00'], NY, '2054-01-05T08:59:59.999-05:00', false],
    ['end - 1ms is open', ['mon-fri 09:00-17:00'], NY, '2054-01-05T16:59:59.999-05:00', true],
    ['end is closed', ['mon-fri 09:00-17:00'], NY, '2054-01-05T17:00:00.000-05:00', false],
    ['friday midday', ['mon-fri 09:00-17:00'], NY, '2054-01-09T12:00:00-05:00', true],
    ['saturday', ['mon-fri 09:00-17:00'], NY, '2054-01-10T12:00:00-05:00', false],
    ['zone matters: 09:00 JST Mon', ['mon-fri 09:00-17:00'], 'Asia/Tokyo', '2054-01-05T00:00:00Z', true],
    ['zone matters: same instant is Sun 19:00 NY', ['mon-fri 09:00-17:00'], NY, '2054-01-05T00:00:00Z', false],
    ['zone matters: 17:00 JST', ['mon-fri 09:00-17:00'], 'Asia/Tokyo', '2054-01-05T08:00:00Z', false],
    ['no windows = always open', [], NY, '2054-01-10T03:00:00-05:00', true],
    // Cross midnight: fri 22:00-06:00.
    ['x-midnight: fri before start', ['fri 22:00-06:00'], NY, '2054-01-09T21:59:59.999-05:00', false],
    ['x-midnight: fri start', ['fri 22:00-06:00'], NY, '2054-01-09T22:00:00-05:00', true],
    ['x-midnight: fri last ms', ['fri 22:00-06:00'], NY, '2054-01-09T23:59:59.999-05:00', true],
    ['x-midnight: sat midnight', ['fri 22:00-06:00'], NY, '2054-01-10T00:00:00-05:00', true],
    ['x-midnight: sat end - 1ms', ['fri 22:00-06:00'], NY, '2054-01-10T05:59:59.999-05:00', true],
    ['x-midnight: sat end', ['fri 22:00-06:00'], NY, '2054-01-10T06:00:00-05:00', false],
    ["x-midnight: fri 03:00 is thursday's", ['fri 22:00-06:00'], NY, '2054-01-09T03:00:00-05:00', false],
    ['x-midnight: fri 03:00 with thu listed', ['thu,fri 22:00-06:00'], NY, '2054-01-09T03:00:00-05:00', true],
    ['x-midnight: sat 22:00 not listed', ['fri 22:00-06:00'], NY, '2054-01-10T22:00:00-05:00', false],
    // Wrapping weekday range fri-mon.
    ['fri-mon: fri start', ['fri-mon 10:00-14:00'], NY, '2054-01-09T10:00:00-05:00', true],
    ['fri-mon: sat', ['fri-mon 10:00-14:00'], NY, '2054-01-10T12:00:00-05:00', true],
    ['fri-mon: sun', ['fri-mon 10:00-14:00'], NY, '2054-01-11T12:00:00-05:00', true],
    ['fri-mon: mon', ['fri-mon 10:00-14:00'], NY, '2054-01-12T12:00:00-05:00', true],
    ['fri-mon: tue', ['fri-mon 10:00-14:00'], NY, '2054-01-06T12:00:00-05:00', false],
    ['fri-mon: thu', ['fri-mon 10:00-14:00'], NY, '2054-01-08T12:00:00-05:00', false],
    ["fri-mon nights: tue 05:00 is monday's", ['fri-mon 22:00-06:00'], NY, '2054-01-06T05:00:00-05:00', true],
    ['fri-mon nights: tue 06:00', ['fri-mon 22:00-06:00'], NY, '2054-01-06T06:00:00-05:00', false],
    ["fri-mon nights: fri 05:00 is thursday's", ['fri-mon 22:00-06:00'], NY, '2054-01-09T05:00:00-05:00', false],
    // 24:00 and 00:00 ends.
    ['24:00: start', ['mon 18:00-24:00'], NY, '2054-01-05T18:00:00-05:00', true],
    ['24:00: last ms of day', ['mon 18:00-24:00'], NY, '2054-01-05T23:59:59.999-05:00', true],
    ['24:00: next midnight closed', ['mon 18:00-24:00'], NY, '2054-01-06T00:00:00-05:00', false],
    ['00:00-24:00: midnight', ['daily 00:00-24:00'], NY, '2054-01-07T00:00:00-05:00', true],
    ['00:00-24:00: last ms', ['daily 00:00-24:00'], NY, '2054-01-07T23:59:59.999-05:00', true],
    ['end 00:00: last ms', ['sat 22:00-00:00'], NY, '2054-01-10T23:59:59.999-05:00', true],
    ['end 00:00: sun midnight closed', ['sat 22:00-00:00'], NY, '2054-01-11T00:00:00-05:00', false],
    // Multiple windows.
    ['multi: morning', ['mon-fri 09:00-12:00', 'mon-fri 13:00-17:00'], NY, '2054-01-05T11:59:59.999-05:00', true],
    ['multi: lunch gap', ['mon-fri 09:00-12:00', 'mon-fri 13:00-17:00'], NY, '2054-01-05T12:30:00-05:00', false],
    ['multi: afternoon', ['mon-fri 09:00-12:00', 'mon-fri 13:00-17:00'], NY, '2054-01-05T13:00:00-05:00', true],
    // Southern hemisphere, standard vs daylight time.
    ['sydney jan (AEDT) 09:00', ['mon-fri 09:00-17:00'], SYD, '2054-01-04T22:00:00Z', true],
    ['sydney jul (AEST) 09:00', ['mon-fri 09:00-17:00'], SYD, '2054-07-05T23:00:00Z', true],
    ['sydney jul (AEST) 08:00', ['mon-fri 09:00-17:00'], SYD, '2054-07-05T22:00:00Z', false],
  ])('%s', (_desc, texts, zone, iso, expected) => {
    expect(isWithinCallingWindow(windows(...texts), zone, at(iso))).toBe(expected);
  });
});

describe('isWithinCallingWindow across DST (wall-clock semantics)', () => {
  it.each<[string, string, string, string, boolean]>([
    // New York spring forward 2054-03-08: 02:00 EST (07:00Z) -> 03:00 EDT.
    ['NY spring 02:30-04:00: 01:59:59.999 EST', 'daily 02:30-04:00', NY, '2054-03-08T06:59:59.999Z', false],
    ['NY spring 02:30-04:00: 03:00 EDT', 'daily 02:30-04:00', NY, '2054-03-08T07:00:00Z', true],
    ['NY spring 02:30-04:00: 03:59:59.999 EDT', 'daily 02:30-04:00', NY, '2054-03-08T07:59:59.999Z', true],
    ['NY spring 02:30-04:00: 04:00 EDT', 'daily 02:30-04:00', NY, '2054-03-08T08:00:00Z', false],
    ['NY spring 01:00-03:00: 01:00 EST', 'daily 01:00-03:00', NY, '2054-03-08T06:00:00Z', true],
    ['NY spring 01:00-03:00: 01:59:59.999 EST', 'daily 01:00-03:00', NY, '2054-03-08T06:59:59.999Z', true],
    ['NY spring 01:00-03:00: 03:00 EDT (1 real hour)', 'daily 01:00-03:00', NY, '2054-03-08T07:00:00Z', false],
    // New York fall back 2054-11-01: 02:00 EDT (06:00Z) -> 01:00 EST.
    ['NY fall 01:00-02:00: 00:59:59.999 EDT', 'daily 01:00-02:00', NY, '2054-11-01T04:59:59.999Z', false],
    ['NY fall 01:00-02:00: 01:00 EDT', 'daily 01:00-02:00', NY, '2054-11-01T05:00:00Z', true],
    ['NY fall 01:00-02:00: 01:59:59.999 EDT', 'daily 01:00-02:00', NY, '2054-11-01T05:59:59.999Z', true],
    ['NY fall 01:00-02:00: 01:00 EST', 'daily 01:00-02:00', NY, '2054-11-01T06:00:00Z', true],
    ['NY fall 01:00-02:00: 01:59:59.999 EST', 'daily 01:00-02:00', NY, '2054-11-01T06:59:59.999Z', true],
    ['NY fall 01:00-02:00: 02:00 EST (2 real hours)', 'daily 01:00-02:00', NY, '2054-11-01T07:00:00Z', false],
    ['NY fall 01:30-03:00: 01:30 EDT', 'daily 01:30-03:00', NY, '2054-11-01T05:30:00Z', true],
    ['NY fall 01:30-03:00: clock back to 01:00 EST', 'daily 01:30-03:00', NY, '2054-11-01T06:00:00Z', false],
    ['NY fall 01:30-03:00: 01:30 EST again', 'daily 01:30-03:00', NY, '2054-11-01T06:30:00Z', true],
    ['NY fall 01:30-03:00: 03:00 EST', 'daily 01:30-03:00', NY, '2054-11-01T08:00:00Z', false],
    // London spring forward 2054-03-29: 01:00 GMT (01:00Z) -> 02:00 BST.
    ['London spring 01:30-02:30: 00:59:59.999 GMT', 'daily 01:30-02:30', LON, '2054-03-29T00:59:59.999Z', false],
    ['London spring 01:30-02:30: 02:00 BST', 'daily 01:30-02:30', LON, '2054-03-29T01:00:00Z', true],
    ['London spring 01:30-02:30: 02:29:59.999 BST', 'daily 01:30-02:30', LON, '2054-03-29T01:29:59.999Z', true],
    ['London spring 01:30-02:30: 02:30 BST', 'daily 01:30-02:30', LON, '2054-03-29T01:30:00Z', false],
    // London fall back 2054-10-25: 02:00 BST (01:00Z) -> 01:00 GMT.
    ['London fall 01:00-02:00: 01:00 BST', 'daily 01:00-02:00', LON, '2054-10-25T00:00:00Z', true],
    ['London fall 01:00-02:00: 01:00 GMT', 'daily 01:00-02:00', LON, '2054-10-25T01:00:00Z', true],
    ['London fall 01:00-02:00: 01:59:59.999 GMT', 'daily 01:00-02:00', LON, '2054-10-25T01:59:59.999Z', true],
    ['London fall 01:00-02:00: 02:00 GMT', 'daily 01:00-02:00', LON, '2054-10-25T02:00:00Z', false],
    // Sydney fall back 2054-04-05: 03:00 AEDT (2054-04-04T16:00Z) -> 02:00 AEST.
    ['Sydney April 02:00-03:00: 01:59:59.999 AEDT', 'daily 02:00-03:00', SYD, '2054-04-04T14:59:59.999Z', false],
    ['Sydney April 02:00-03:00: 02:00 AEDT', 'daily 02:00-03:00', SYD, '2054-04-04T15:00:00Z', true],
    ['Sydney April 02:00-03:00: 02:00 AEST', 'daily 02:00-03:00', SYD, '2054-04-04T16:00:00Z', true],
    ['Sydney April 02:00-03:00: 02:59:59.999 AEST', 'daily 02:00-03:00', SYD, '2054-04-04T16:59:59.999Z', true],
    ['Sydney April 02:00-03:00: 03:00 AEST', 'daily 02:00-03:00', SYD, '2054-04-04T17:00:00Z', false],
    // Sydney spring forward 2054-10-04: 02:00 AEST (2054-10-03T16:00Z) -> 03:00 AEDT.
    ['Sydney October 02:30-04:00: 01:59:59.999 AEST', 'daily 02:30-04:00', SYD, '2054-10-03T15:59:59.999Z', false],
    ['Sydney October 02:30-04:00: 03:00 AEDT', 'daily 02:30-04:00', SYD, '2054-10-03T16:00:00Z', true],
    ['Sydney October 02:30-04:00: 03:59:59.999 AEDT', 'daily 02:30-04:00', SYD, '2054-10-03T16:59:59.999Z', true],
    ['Sydney October 02:30-04:00: 04:00 AEDT', 'daily 02:30-04:00', SYD, '2054-10-03T17:00:00Z', false],
  ])('%s', (_desc, text, zone, iso, expected) => {
    expect(isWithinCallingWindow(windows(text), zone, at(iso))).toBe(expected);
  });
});

describe('nextWindowOpening', () => {
  it.each<[string, string[], string, string, string]>([
    [
      'already open -> same instant',
      ['mon-fri 09:00-17:00'],
      NY,
      '2054-01-05T10:15:30.123-05:00',
      '2054-01-05T15:15:30.123Z',
    ],
    [
      'exactly at start -> same instant',
      ['mon-fri 09:00-17:00'],
      NY,
      '2054-01-05T09:00:00-05:00',
      '2054-01-05T14:00:00Z',
    ],
    ['no windows -> same instant', [], NY, '2054-01-10T03:00:00-05:00', '2054-01-10T08:00:00Z'],
    ['later today', ['mon-fri 09:00-17:00'], NY, '2054-01-05T07:00:00-05:00', '2054-01-05T14:00:00Z'],
    ['at end -> tomorrow', ['mon-fri 09:00-17:00'], NY, '2054-01-05T17:00:00-05:00', '2054-01-06T14:00:00Z'],
    ['evening -> tomorrow', ['mon-fri 09:00-17:00'], NY, '2054-01-05T18:00:00-05:00', '2054-01-06T14:00:00Z'],
    ['friday evening -> monday', ['mon-fri 09:00-17:00'], NY, '2054-01-09T17:00:00-05:00', '2054-01-12T14:00:00Z'],
    ['saturday -> monday', ['mon-fri 09:00-17:00'], NY, '2054-01-10T12:00:00-05:00', '2054-01-12T14:00:00Z'],
    ['one day a week -> 7 days later', ['tue 08:00-09:00'], NY, '2054-01-06T09:00:00-05:00', '2054-01-13T13:00:00Z'],
    [
      'x-midnight open on saturday morning',
      ['fri 22:00-06:00'],
      NY,
      '2054-01-10T03:00:00-05:00',
      '2054-01-10T08:00:00Z',
    ],
    ['x-midnight closed -> next friday', ['fri 22:00-06:00'], NY, '2054-01-10T06:00:00-05:00', '2054-01-17T03:00:00Z'],
    [
      'multi: lunch gap -> afternoon',
      ['mon-fri 09:00-12:00', 'mon-fri 13:00-17:00'],
      NY,
      '2054-01-05T12:00:00-05:00',
      '2054-01-05T18:00:00Z',
    ],
    [
      'multi: earliest of several',
      ['mon-fri 09:00-17:00', 'sat 10:00-12:00'],
      NY,
      '2054-01-09T18:00:00-05:00',
      '2054-01-10T15:00:00Z',
    ],
    ['tokyo zone', ['mon-fri 09:00-17:00'], 'Asia/Tokyo', '2054-01-04T12:00:00Z', '2054-01-05T00:00:00Z'],
    // DST, New York.
    [
      'NY spring: start in the gap opens at 03:00 EDT',
      ['daily 02:30-04:00'],
      NY,
      '2054-03-07T18:00:00-05:00',
      '2054-03-08T07:00:00Z',
    ],
    [
      'NY spring: weekend -> monday EDT',
      ['mon-fri 09:00-17:00'],
      NY,
      '2054-03-06T17:00:00-05:00',
      '2054-03-09T13:00:00Z',
    ],
    [
      'NY spring: 01:00-03:00 closed at 03:00 EDT -> next day',
      ['daily 01:00-03:00'],
      NY,
      '2054-03-08T07:00:00Z',
      '2054-03-09T05:00:00Z',
    ],
    [
      'NY spring: window wholly in the gap is skipped',
      ['sun 02:15-02:45'],
      NY,
      '2054-03-07T12:00:00-05:00',
      '2054-03-15T06:15:00Z',
    ],
    ['NY fall: first 01:00 is EDT', ['daily 01:00-02:00'], NY, '2054-10-31T12:00:00-04:00', '2054-11-01T05:00:00Z'],
    [
      'NY fall: repeated 01:30 opens again in EST',
      ['daily 01:30-03:00'],
      NY,
      '2054-11-01T06:00:00Z',
      '2054-11-01T06:30:00Z',
    ],
    [
      'NY fall: clock falls back into window',
      ['daily 00:00-01:30'],
      NY,
      '2054-11-01T05:30:00Z',
      '2054-11-01T06:00:00Z',
    ],
    [
      'NY fall: weekend -> monday EST',
      ['mon-fri 09:00-17:00'],
      NY,
      '2054-10-30T17:00:00-04:00',
      '2054-11-02T14:00:00Z',
    ],
    // DST, London.
    [
      'London spring: gap start opens at 02:00 BST',
      ['daily 01:30-02:30'],
      LON,
      '2054-03-28T12:00:00Z',
      '2054-03-29T01:00:00Z',
    ],
    ['London spring: 09:00 BST', ['daily 09:00-17:00'], LON, '2054-03-28T18:00:00Z', '2054-03-29T08:00:00Z'],
    ['London fall: open in first 01:xx', ['daily 01:00-02:00'], LON, '2054-10-25T00:30:00Z', '2054-10-25T00:30:00Z'],
    ['London fall: 09:00 GMT', ['daily 09:00-17:00'], LON, '2054-10-24T18:00:00+01:00', '2054-10-25T09:00:00Z'],
    // DST, Sydney (southern hemisphere).
    ['Sydney April: open in second 02:xx', ['daily 02:00-03:00'], SYD, '2054-04-04T16:30:00Z', '2054-04-04T16:30:00Z'],
    ['Sydney April: first 02:00 is AEDT', ['daily 02:00-03:00'], SYD, '2054-04-04T12:00:00Z', '2054-04-04T15:00:00Z'],
    [
      'Sydney April: after 03:00 AEST -> next day',
      ['daily 02:00-03:00'],
      SYD,
      '2054-04-04T17:00:00Z',
      '2054-04-05T16:00:00Z',
    ],
    [
      'Sydney October: gap start opens at 03:00 AEDT',
      ['daily 02:30-04:00'],
      SYD,
      '2054-10-03T12:00:00Z',
      '2054-10-03T16:00:00Z',
    ],
    [
      'Sydney October: weekend -> monday AEDT',
      ['mon-fri 09:00-17:00'],
      SYD,
      '2054-10-02T17:00:00+10:00',
      '2054-10-04T22:00:00Z',
    ],
  ])('%s', (_desc, texts, zone, fromIso, expectedIso) => {
    expect(nextWindowOpening(windows(...texts), zone, at(fromIso))?.toISOString()).toBe(at(expectedIso).toISOString());
  });

  it('returns null when no window can ever open', () => {
    expect(nextWindowOpening([{ days: [], start: '09:00', end: '17:00' }], NY, at('2054-01-05T00:00:00Z'))).toBeNull();
  });

  // luxon resolves ambiguous wall times using the offset in effect "now"; our answers must not depend on the season we run in.
  it.each([Date.UTC(2054, 0, 15), Date.UTC(2054, 6, 15)])(
    'fall-back answers do not depend on the current date (now=%d)',
    (now) => {
      const saved = Settings.now;
      Settings.now = () => now;
      try {
        expect(
          nextWindowOpening(windows('daily 01:00-02:00'), NY, at('2054-10-31T12:00:00-04:00'))?.toISOString(),
        ).toBe('2054-11-01T05:00:00.000Z');
        expect(nextWindowOpening(windows('daily 01:30-03:00'), NY, at('2054-11-01T06:00:00Z'))?.toISOString()).toBe(
          '2054-11-01T06:30:00.000Z',
        );
      } finally {
        Settings.now = saved;
      }
    },
  );
});

describe('time zones', () => {
  it.each<[string, boolean]>([
    ['America/New_York', true],
    ['Europe/London', true],
    ['Australia/Sydney', true],
    ['UTC', true],
    ['Mars/Olympus_Mons', false],
    ['America/New_Yrok', false],
    ['New York', false],
    ['+05:00', false],
    ['', false],
  ])('isValidTimeZone(%j) = %s', (zone, expected) => {
    expect(isValidTimeZone(zone)).toBe(expected);
  });

  it.each(['Mars/Olympus_Mons', ''])('evaluation rejects invalid zone %j', (zone) => {
    const w = windows('mon-fri 09:00-17:00');
    expect(errorOf(() => isWithinCallingWindow(w, zone, at('2054-01-05T12:00:00Z'))).message).toBe(
      `Invalid time zone "${zone}"`,
    );
    expect(errorOf(() => nextWindowOpening(w, zone, at('2054-01-05T12:00:00Z'))).message).toBe(
      `Invalid time zone "${zone}"`,
    );
  });

  it('evaluation rejects an invalid Date', () => {
    expect(errorOf(() => isWithinCallingWindow([], NY, new Date(Number.NaN))).message).toBe('Invalid date');
  });
});

describe('callingWindowsSchemaCheck', () => {
  it.each<[string, unknown, CallingWindow[]]>([
    ['empty list', [], []],
    [
      'weekday window',
      [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' }],
      [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' }],
    ],
    [
      '24:00 end and cross-midnight',
      [
        { days: [7], start: '00:00', end: '24:00' },
        { days: [5], start: '22:00', end: '06:00' },
      ],
      [
        { days: [7], start: '00:00', end: '24:00' },
        { days: [5], start: '22:00', end: '06:00' },
      ],
    ],
    [
      'normalises day order and duplicates',
      [{ days: [5, 1, 5], start: '09:00', end: '10:00' }],
      [{ days: [1, 5], start: '09:00', end: '10:00' }],
    ],
    [
      'drops unknown keys',
      [{ days: [1], start: '09:00', end: '10:00', note: 'x' }],
      [{ days: [1], start: '09:00', end: '10:00' }],
    ],
  ])('accepts %s', (_desc, value, expected) => {
    expect(callingWindowsSchemaCheck(value)).toEqual(expected);
  });

  const ok = { days: [1], start: '09:00', end: '17:00' };
  it.each<[string, unknown, string]>([
    ['null', null, 'value must be an array'],
    ['object', {}, 'value must be an array'],
    ['string', 'mon-fri 09:00-17:00', 'value must be an array'],
    ['null item', [null], '[0] must be an object'],
    ['array item', [[1, 2]], '[0] must be an object'],
    ['string item', ['mon 09:00-10:00'], '[0] must be an object'],
    ['missing days', [{ start: '09:00', end: '17:00' }], '[0].days must be a non-empty array'],
    ['empty days', [{ ...ok, days: [] }], '[0].days must be a non-empty array'],
    ['day 0', [{ ...ok, days: [0] }], '[0].days must contain ISO weekdays 1-7, got 0'],
    ['day 8', [{ ...ok, days: [8] }], '[0].days must contain ISO weekdays 1-7, got 8'],
    ['fractional day', [{ ...ok, days: [1.5] }], '[0].days must contain ISO weekdays 1-7, got 1.5'],
    ['string day', [{ ...ok, days: ['1'] }], '[0].days must contain ISO weekdays 1-7, got "1"'],
    ['missing start', [{ days: [1], end: '17:00' }], '[0].start must be "HH:MM"'],
    ['one-digit hour', [{ ...ok, start: '9:00' }], '[0].start must be "HH:MM" 00:00-23:59, got "9:00"'],
    ['24:00 start', [{ ...ok, start: '24:00' }], '[0].start must be "HH:MM"'],
    ['numeric start', [{ ...ok, start: 900 }], '[0].start must be "HH:MM" 00:00-23:59, got 900'],
    ['missing end', [{ days: [1], start: '09:00' }], '[0].end must be "HH:MM"'],
    ['end past 24:00', [{ ...ok, end: '24:30' }], '[0].end must be "HH:MM" 00:00-24:00, got "24:30"'],
    ['empty window', [{ ...ok, end: '09:00' }], '[0] has equal start and end'],
    ['second item bad', [ok, { days: [1], start: 9, end: 17 }], '[1].start'],
  ])('rejects %s', (_desc, value, fragment) => {
    const err = errorOf(() => callingWindowsSchemaCheck(value));
    expect(err.message).toContain('Invalid stored calling windows: ');
    expect(err.message).toContain(fragment);
  });
});
