// The viewer's "today" as the outcome counters answer it: whole UTC days from call_outcome_days, plus or minus one
// range of the quarter-hour counters (call_outcome_quarters, 20261202110000), whichever reads fewer quarters. Every
// IANA zone in use is a whole number of quarter hours from UTC, so a local midnight begins a quarter and the sum is
// exact; a viewer in UTC reads today's day counters alone, one in another zone at most 48 quarters per account and
// outcome beside them (a local midnight is at most 12 hours from a UTC one, one way or the other), instead of the up
// to 96 of the day's quarters.

/**
 * The viewer's "today" so far: from the local midnight of their zone (UTC's when they chose none or show UTC) to now.
 * No call ends after now, so the counters of today's UTC day count no later call.
 */
export interface TodaySoFar {
  from: Date;
  to: Date;
}

/** The counters that sum to a TodaySoFar: the day counters of `days`, plus `sign` times the quarters [from, until). */
export interface TodayTerms {
  /** The first and last UTC day (YYYY-MM-DD) whose day counters count; null: none. */
  days: { first: string; last: string } | null;
  quarters: { from: Date; until: Date; sign: 1 | -1 | 0 };
}

const QUARTER_MS = 900_000;
const DAY_MS = 86_400_000;

const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/** The day counters and the range of quarters that sum to `today` (whose `from` begins a quarter). */
export function todayTerms(today: TodaySoFar): TodayTerms {
  const midnight = today.from.getTime();
  const now = today.to.getTime();
  const utcMidnight = Math.floor(now / DAY_MS) * DAY_MS;
  const none = { from: today.from, until: today.from, sign: 0 as const };
  if (midnight === utcMidnight)
    return { days: { first: utcDay(utcMidnight), last: utcDay(utcMidnight) }, quarters: none };
  const yesterday = utcMidnight - DAY_MS;
  // A local day of 25 hours (the clocks went back) that began before yesterday's UTC midnight: both days, and the
  // quarters of the hour before.
  if (midnight < yesterday)
    return {
      days: { first: utcDay(yesterday), last: utcDay(utcMidnight) },
      quarters: { from: today.from, until: new Date(yesterday), sign: 1 },
    };
  if (midnight < utcMidnight) {
    // Today's UTC day, and of yesterday's the part after the local midnight: its quarters, or the day less those
    // before.
    if (utcMidnight - midnight <= midnight - yesterday)
      return {
        days: { first: utcDay(utcMidnight), last: utcDay(utcMidnight) },
        quarters: { from: today.from, until: new Date(utcMidnight), sign: 1 },
      };
    return {
      days: { first: utcDay(yesterday), last: utcDay(utcMidnight) },
      quarters: { from: new Date(yesterday), until: today.from, sign: -1 },
    };
  }
  // The local midnight is later than the UTC one: the quarters since it, or today's UTC day less those before it.
  const upToNow = new Date(Math.floor(now / QUARTER_MS) * QUARTER_MS + QUARTER_MS);
  if (upToNow.getTime() - midnight <= midnight - utcMidnight)
    return { days: null, quarters: { from: today.from, until: upToNow, sign: 1 } };
  return {
    days: { first: utcDay(utcMidnight), last: utcDay(utcMidnight) },
    quarters: { from: new Date(utcMidnight), until: today.from, sign: -1 },
  };
}
