// What a callee's clock reads at an instant, and the instants at which it reads a given wall time: DST-correct
// (a spring-forward gap has no such instant, a fall-back hour has two), from the tz database through luxon's zones.
import { IANAZone } from 'luxon';
import { canonicalTimeZone } from '../domain/time-zones.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** A wall-clock reading: the local calendar day and minute of the day. */
export interface LocalClock {
  /** Local calendar day as YYYY-MM-DD. */
  date: string;
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  /** 0 Monday ... 6 Sunday, the order of DAY_NAMES. */
  weekday: number;
  /** Minutes since local midnight, 0-1439 (seconds dropped: 07:59:59 is minute 479). */
  minute: number;
  /** The same reading as if it were UTC: local midnight of `date` plus `minute`, in ms. */
  naive: number;
}

export class ZoneError extends Error {}

/**
 * A zone's UTC offset (minutes) at any instant, from its offset changes found once per UTC year: the engine reads
 * hundreds of offsets per decision, and asking the tz data each time (an Intl formatting) costs several ms per
 * held call. The changes are found by sampling every 6 hours, which holds for every zone of the tz database (none
 * changes its offset twice within 6 hours), then to the millisecond.
 */
export class Zone {
  private readonly years = new Map<number, { starts: number[]; offsets: number[] }>();
  constructor(
    readonly name: string,
    private readonly tz: IANAZone,
  ) {}

  offset(at: number): number {
    const year = new Date(at).getUTCFullYear();
    let timeline = this.years.get(year);
    if (timeline === undefined) this.years.set(year, (timeline = this.timeline(year)));
    const { starts, offsets } = timeline;
    let i = starts.length - 1;
    while (i > 0 && (starts[i] as number) > at) i--;
    return offsets[i] as number;
  }

  /** The instants in (from, to] at which the offset changes. */
  changes(from: number, to: number): number[] {
    const found: number[] = [];
    for (let year = new Date(from).getUTCFullYear(); year <= new Date(to).getUTCFullYear(); year++) {
      const first = Date.UTC(year, 0, 1);
      // A change at the very start of a year is the year's first start: it counts when the offset differs.
      if (this.offset(first) !== this.offset(first - 1) && first > from && first <= to) found.push(first);
      const starts = this.years.get(year)?.starts ?? [];
      for (const t of starts.slice(1)) if (t > from && t <= to) found.push(t);
    }
    return found;
  }

  private timeline(year: number): { starts: number[]; offsets: number[] } {
    const from = Date.UTC(year, 0, 1);
    const to = Date.UTC(year + 1, 0, 1);
    const starts = [from];
    const offsets = [this.tz.offset(from)];
    const step = 6 * HOUR_MS;
    let after = offsets[0] as number;
    for (let a = from; a < to; a += step) {
      const b = Math.min(a + step, to);
      const before = after;
      after = this.tz.offset(b);
      if (after === before) continue;
      let lo = a;
      let hi = b;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.tz.offset(mid) === before) lo = mid;
        else hi = mid;
      }
      if (hi < to) {
        starts.push(hi);
        offsets.push(this.tz.offset(hi));
      }
    }
    return { starts, offsets };
  }
}

/** Zones by canonical name: luxon keeps each zone it makes for good, so only canonical names reach it. */
const zones = new Map<string, Zone>();

export function zoneOf(name: string): Zone {
  const canonical = canonicalTimeZone(name);
  if (canonical === null) throw new ZoneError(`Unknown time zone "${name}"`);
  let zone = zones.get(canonical);
  if (zone === undefined) {
    const tz = IANAZone.create(canonical);
    if (!tz.isValid) throw new ZoneError(`Unknown time zone "${name}"`);
    zones.set(canonical, (zone = new Zone(canonical, tz)));
  }
  return zone;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The local day of a naive (as-if-UTC) instant, YYYY-MM-DD. */
export function naiveDate(naive: number): string {
  const d = new Date(naive);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function localClock(zone: Zone, at: number): LocalClock {
  const exact = at + zone.offset(at) * MINUTE_MS;
  const naive = exact - (((exact % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
  const d = new Date(naive);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return {
    date: naiveDate(naive),
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: (d.getUTCDay() + 6) % 7,
    minute: (naive - midnight) / MINUTE_MS,
    naive,
  };
}

/** "HH:MM" of a minute of the day. */
export function clockText(minute: number): string {
  return `${pad(Math.floor(minute / 60))}:${pad(minute % 60)}`;
}

/**
 * Every instant whose wall-clock reading is `naive` (a local time encoded as if it were UTC): none inside a
 * spring-forward gap, two inside a fall-back overlap, earliest first.
 */
export function instantsForWallTime(zone: Zone, naive: number): number[] {
  const offsets = new Set([-DAY_MS, 0, DAY_MS].map((d) => zone.offset(naive + d)));
  return [...offsets]
    .map((offset) => naive - offset * MINUTE_MS)
    .filter((t) => zone.offset(t) * MINUTE_MS === naive - t)
    .sort((a, b) => a - b);
}
