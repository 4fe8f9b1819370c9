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

/** Luxon zones by canonical name: luxon keeps each zone it makes for good, so only canonical names reach it. */
const zones = new Map<string, IANAZone>();

export function zoneOf(name: string): IANAZone {
  const canonical = canonicalTimeZone(name);
  if (canonical === null) throw new ZoneError(`Unknown time zone "${name}"`);
  let zone = zones.get(canonical);
  if (zone === undefined) {
    zone = IANAZone.create(canonical);
    if (!zone.isValid) throw new ZoneError(`Unknown time zone "${name}"`);
    zones.set(canonical, zone);
  }
  return zone;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The local day of a naive (as-if-UTC) instant, YYYY-MM-DD. */
export function naiveDate(naive: number): string {
  const d = new Date(naive);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function localClock(zone: IANAZone, at: number): LocalClock {
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
export function instantsForWallTime(zone: IANAZone, naive: number): number[] {
  const offsets = new Set([-DAY_MS, 0, DAY_MS].map((d) => zone.offset(naive + d)));
  return [...offsets]
    .map((offset) => naive - offset * MINUTE_MS)
    .filter((t) => zone.offset(t) * MINUTE_MS === naive - t)
    .sort((a, b) => a - b);
}

/**
 * The instants in (from, to] at which the zone's UTC offset changes. Sampled every 6 hours, which holds for every
 * zone of the tz database (none changes its offset twice within 6 hours), then found to the millisecond.
 */
export function offsetTransitions(zone: IANAZone, from: number, to: number): number[] {
  const found: number[] = [];
  const step = 6 * HOUR_MS;
  for (let a = from; a < to; a += step) {
    const b = Math.min(a + step, to);
    const before = zone.offset(a);
    if (zone.offset(b) === before) continue;
    let lo = a;
    let hi = b;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (zone.offset(mid) === before) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}
