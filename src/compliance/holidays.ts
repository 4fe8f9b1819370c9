// The calendar days a rule's holidays fall on in a year (fixed dates, nth weekday of a month, days from Easter),
// with the weekdays a statute also names when the date falls near a weekend.
import { DAY_NAMES } from '../../schemas/calling-window.js';
import type { HolidayData } from '../../schemas/calling-rules.js';
import { DAY_MS, naiveDate } from './zone-clock.js';

/** Western (Gregorian) Easter Sunday of a year, as a UTC midnight (the anonymous Gregorian algorithm). */
export function easterSunday(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return Date.UTC(year, month - 1, day);
}

/** 0 Monday ... 6 Sunday of a UTC midnight. */
const weekdayOf = (midnight: number) => (new Date(midnight).getUTCDay() + 6) % 7;

/** The date's UTC midnight in `year`, or null when it does not exist that year (a fifth Monday, February 30). */
function baseDate(date: HolidayData['date'], year: number): number | null {
  switch (date.kind) {
    case 'fixed': {
      const t = Date.UTC(year, date.month - 1, date.day);
      return new Date(t).getUTCMonth() === date.month - 1 ? t : null;
    }
    case 'nth_weekday': {
      const want = DAY_NAMES.indexOf(date.weekday);
      if (date.n === -1) {
        const last = Date.UTC(year, date.month, 0);
        return last - ((weekdayOf(last) - want + 7) % 7) * DAY_MS;
      }
      const first = Date.UTC(year, date.month - 1, 1);
      const t = first + ((want - weekdayOf(first) + 7) % 7) * DAY_MS + (date.n - 1) * 7 * DAY_MS;
      return new Date(t).getUTCMonth() === date.month - 1 ? t : null;
    }
    case 'easter_offset':
      return easterSunday(year) + date.days * DAY_MS;
  }
}

/** The days (UTC midnights) a holiday closes in the holiday year `year`: its date and the days also observed. */
export function holidayDays(holiday: HolidayData, year: number): number[] {
  if (holiday.years === 'even' && year % 2 !== 0) return [];
  if (holiday.years === 'odd' && year % 2 === 0) return [];
  const base = baseDate(holiday.date, year);
  if (base === null) return [];
  const day = base + (holiday.offset_days ?? 0) * DAY_MS;
  const days = [day];
  const weekday = weekdayOf(day);
  for (const observed of holiday.also_observed ?? []) {
    if (observed === 'saturday_to_friday' && weekday === 5) days.push(day - DAY_MS);
    if (observed === 'saturday_to_monday' && weekday === 5) days.push(day + 2 * DAY_MS);
    if (observed === 'sunday_to_monday' && weekday === 6) days.push(day + DAY_MS);
    if (observed === 'midweek_to_preceding_monday' && weekday >= 1 && weekday <= 4) {
      days.push(day - weekday * DAY_MS);
    }
  }
  return days;
}

/** Per holiday list, per year: the closed days (YYYY-MM-DD) -> the holiday's name. */
const cache = new WeakMap<readonly HolidayData[], Map<number, ReadonlyMap<string, string>>>();

function closedDaysAround(holidays: readonly HolidayData[], year: number): ReadonlyMap<string, string> {
  let years = cache.get(holidays);
  if (years === undefined) cache.set(holidays, (years = new Map<number, ReadonlyMap<string, string>>()));
  let days = years.get(year);
  if (days === undefined) {
    const map = new Map<string, string>();
    // A holiday of the year before or after may be observed on a day of this year (New Year's Day on a Saturday
    // observed on Friday, December 31).
    for (const y of [year - 1, year, year + 1]) {
      for (const holiday of holidays) {
        for (const day of holidayDays(holiday, y)) if (!map.has(naiveDate(day))) map.set(naiveDate(day), holiday.name);
      }
    }
    years.set(year, (days = map));
  }
  return days;
}

/** The holiday that closes the local day `date` (YYYY-MM-DD of `year`), or null. */
export function holidayOn(holidays: readonly HolidayData[], year: number, date: string): string | null {
  if (holidays.length === 0) return null;
  return closedDaysAround(holidays, year).get(date) ?? null;
}
