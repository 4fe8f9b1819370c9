// The days a rule's holidays close (issue 48): nth weekdays, Easter-relative days, Election Day's even years, and
// the weekdays also observed when the date falls near a weekend, across a year's end.
import { describe, expect, it } from 'vitest';
import type { HolidayData } from '../../schemas/calling-rules.js';
import { easterSunday, holidayDays, holidayOn } from '../../src/compliance/holidays.js';

const days = (holiday: HolidayData, year: number) =>
  holidayDays(holiday, year).map((t) => new Date(t).toISOString().slice(0, 10));

describe('holiday dates', () => {
  it('finds Western Easter (2054-2058), always a Sunday from March 22 to April 25', () => {
    const found = [2054, 2055, 2056, 2057, 2058].map((y) => new Date(easterSunday(y)).toISOString().slice(0, 10));
    expect(found).toEqual(['2054-03-29', '2055-04-18', '2056-04-02', '2057-04-22', '2058-04-14']);
    for (let year = 2054; year < 2454; year++) {
      const easter = new Date(easterSunday(year));
      expect(easter.getUTCDay()).toBe(0);
      expect(easter.getTime()).toBeGreaterThanOrEqual(Date.UTC(year, 2, 22));
      expect(easter.getTime()).toBeLessThanOrEqual(Date.UTC(year, 3, 25));
    }
  });

  it('finds the nth and the last weekday of a month, and skips a fifth that does not exist', () => {
    const mlk: HolidayData = { name: 'MLK', date: { kind: 'nth_weekday', month: 1, weekday: 'mon', n: 3 } };
    const memorial: HolidayData = { name: 'Memorial', date: { kind: 'nth_weekday', month: 5, weekday: 'mon', n: -1 } };
    const fifth: HolidayData = { name: 'Fifth', date: { kind: 'nth_weekday', month: 2, weekday: 'mon', n: 5 } };
    expect(days(mlk, 2056)).toEqual(['2056-01-17']);
    expect(days(memorial, 2056)).toEqual(['2056-05-29']);
    expect(days(fifth, 2055)).toEqual([]);
  });

  it('puts Election Day on the Tuesday after the first Monday of November, in even years only', () => {
    const election: HolidayData = {
      name: 'Election Day',
      date: { kind: 'nth_weekday', month: 11, weekday: 'mon', n: 1 },
      offset_days: 1,
      years: 'even',
    };
    expect(days(election, 2056)).toEqual(['2056-11-07']);
    expect(days(election, 2057)).toEqual([]);
  });

  it('closes the weekday also observed, and the date itself', () => {
    const july4: HolidayData = {
      name: 'Independence Day',
      date: { kind: 'fixed', month: 7, day: 4 },
      also_observed: ['saturday_to_friday', 'sunday_to_monday'],
    };
    expect(days(july4, 2055)).toEqual(['2055-07-04', '2055-07-05']); // a Sunday
    expect(days(july4, 2054)).toEqual(['2054-07-04', '2054-07-03']); // a Saturday
    expect(days(july4, 2056)).toEqual(['2056-07-04']); // a Tuesday
    const juneteenth: HolidayData = {
      name: 'Juneteenth',
      date: { kind: 'fixed', month: 6, day: 19 },
      also_observed: ['midweek_to_preceding_monday', 'saturday_to_monday'],
    };
    expect(days(juneteenth, 2057)).toEqual(['2057-06-19', '2057-06-18']); // Tuesday -> Monday before
    expect(days(juneteenth, 2055)).toEqual(['2055-06-19', '2055-06-21']); // Saturday -> Monday after
    expect(days({ ...juneteenth, date: { kind: 'fixed', month: 6, day: 17 } }, 2055)).toEqual([
      '2055-06-17',
      '2055-06-14',
    ]);
  });

  it('closes December 31 for a New Year’s Day that falls on a Saturday', () => {
    const newYear: HolidayData = {
      name: "New Year's Day",
      date: { kind: 'fixed', month: 1, day: 1 },
      also_observed: ['saturday_to_friday'],
    };
    expect(holidayOn([newYear], 2055, '2055-12-31')).toBe("New Year's Day"); // 2056-01-01 is a Saturday
    expect(holidayOn([newYear], 2055, '2055-12-30')).toBe(null);
  });
});
