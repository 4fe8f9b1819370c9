// Agent calling windows: parse/format the operator syntax, validate stored JSON, and evaluate open/next-opening in the agent's time zone.
import { DateTime, IANAZone } from 'luxon';
import { DAY_NAMES, EVERY_DAY } from '../../schemas/calling-window.js';
import { canonicalTimeZone } from './time-zones.js';

export interface CallingWindow {
  days: number[];
  start: string;
  end: string;
}

export class CallingWindowError extends Error {
  override name = 'CallingWindowError';
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const SEARCH_MS = 8 * DAY_MS;
const TIME_RE = /^(\d{2}):(\d{2})$/;
const SYNTAX = 'expected "<days> <HH:MM>-<HH:MM>"';

// Minutes since midnight, or null. 24:00 is only meaningful as an end ("until midnight").
function timeToMinutes(text: string, allow24: boolean): number | null {
  const m = TIME_RE.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h === 24 && min === 0 && allow24) return 1440;
  return h <= 23 && min <= 59 ? h * 60 + min : null;
}

function dayIndex(name: string): number | null {
  const i = (DAY_NAMES as readonly string[]).indexOf(name);
  return i < 0 ? null : i + 1;
}

const nextDay = (d: number): number => (d % 7) + 1;
const prevDay = (d: number): number => ((d + 5) % 7) + 1;

function parseDays(spec: string, fail: (why: string) => never): number[] {
  if (spec === EVERY_DAY) return [1, 2, 3, 4, 5, 6, 7];
  const days = new Set<number>();
  for (const item of spec.split(',')) {
    const [from, to, ...rest] = item.split('-');
    const a = dayIndex(from ?? '');
    const b = to === undefined ? a : dayIndex(to);
    if (a === null || b === null || rest.length > 0) {
      fail(`unknown days "${item}" (use mon..sun, a range like mon-fri, a list like sat,sun, or daily)`);
    }
    // Walk forward so wrapping ranges such as fri-mon work.
    for (let d = a; ; d = nextDay(d)) {
      days.add(d);
      if (d === b) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

export function parseCallingWindow(text: string): CallingWindow {
  const fail = (why: string): never => {
    throw new CallingWindowError(`Invalid calling window "${text}": ${why}`);
  };
  const m = /^(.+?)\s+(\S+?)\s*-\s*(\S+)$/.exec(text.trim().toLowerCase());
  if (!m || !TIME_RE.test(m[2] ?? '') || !TIME_RE.test(m[3] ?? '')) return fail(SYNTAX);
  const [, daySpec = '', start = '', end = ''] = m;
  const days = parseDays(daySpec.replace(/\s+/g, ''), fail);
  const s = timeToMinutes(start, false);
  if (s === null) fail(`invalid start time "${start}" (expected 00:00-23:59)`);
  const e = timeToMinutes(end, true);
  if (e === null) fail(`invalid end time "${end}" (expected 00:00-23:59, or 24:00)`);
  if (s === e) fail(`start and end are both "${start}", so the window would be empty`);
  return { days, start, end };
}

export function formatCallingWindow(w: CallingWindow): string {
  const set = new Set(w.days);
  const times = `${w.start}-${w.end}`;
  if (set.size === 7) return `${EVERY_DAY} ${times}`;
  // Split the (circular) week into runs of consecutive days; a run starts where its previous day is absent.
  const parts: string[] = [];
  for (const first of [...set].sort((x, y) => x - y)) {
    if (set.has(prevDay(first))) continue;
    let last = first;
    while (set.has(nextDay(last))) last = nextDay(last);
    const len = ((last - first + 7) % 7) + 1;
    const name = (d: number): string => DAY_NAMES[d - 1] ?? '?';
    if (len >= 3) parts.push(`${name(first)}-${name(last)}`);
    else for (let d = first, i = 0; i < len; d = nextDay(d), i++) parts.push(name(d));
  }
  return `${parts.join(',')} ${times}`;
}

export function isValidTimeZone(zone: string): boolean {
  // Node 24's Intl also takes a UTC offset ("+05:00") as a zone; it has no daylight-saving rules: refused, as on 20.
  return !/^[+-]/.test(zone) && IANAZone.isValidZone(zone);
}

export function callingWindowsSchemaCheck(value: unknown): CallingWindow[] {
  const fail = (path: string, why: string): never => {
    throw new CallingWindowError(`Invalid stored calling windows: ${path} ${why}`);
  };
  if (!Array.isArray(value)) return fail('value', 'must be an array');
  return value.map((item: unknown, i): CallingWindow => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return fail(`[${i}]`, 'must be an object with days, start and end');
    }
    const { days, start, end } = item as Record<string, unknown>;
    if (!Array.isArray(days) || days.length === 0) return fail(`[${i}].days`, 'must be a non-empty array');
    for (const d of days) {
      if (!Number.isInteger(d) || (d as number) < 1 || (d as number) > 7) {
        fail(`[${i}].days`, `must contain ISO weekdays 1-7, got ${JSON.stringify(d)}`);
      }
    }
    const s = typeof start === 'string' ? timeToMinutes(start, false) : null;
    if (s === null) return fail(`[${i}].start`, `must be "HH:MM" 00:00-23:59, got ${JSON.stringify(start)}`);
    const e = typeof end === 'string' ? timeToMinutes(end, true) : null;
    if (e === null) return fail(`[${i}].end`, `must be "HH:MM" 00:00-24:00, got ${JSON.stringify(end)}`);
    if (s === e) return fail(`[${i}]`, 'has equal start and end');
    const sorted = [...new Set(days as number[])].sort((x, y) => x - y);
    return { days: sorted, start: start as string, end: end as string };
  });
}

/**
 * The zone objects handed to luxon, by canonical name: a zone's validity does not change while the process runs, and
 * luxon's check builds an Intl.DateTimeFormat every time (a large share of an accepted trigger's CPU:
 * docs/performance.md#valid-zones-remembered). Luxon is only ever given canonical names (canonicalTimeZone): it keeps
 * every zone object it makes by the name it was given, for good, so a name per spelling (america/new_york,
 * AMERICA/new_york, ...) would grow without bound; by canonical name, this map and luxon's cache hold at most the tz
 * database's names.
 */
const zones = new Map<string, IANAZone>();

function requireZone(timeZone: string): IANAZone {
  const name = canonicalTimeZone(timeZone);
  if (name === null) throw new CallingWindowError(`Invalid time zone "${timeZone}"`);
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = IANAZone.create(name);
    if (!zone.isValid) throw new CallingWindowError(`Invalid time zone "${timeZone}"`);
    zones.set(name, zone);
  }
  return zone;
}

function requireInstant(d: Date): number {
  const t = d.getTime();
  if (Number.isNaN(t)) throw new CallingWindowError('Invalid date');
  return t;
}

// Pure wall-clock membership: what matters is what the callee's clock reads, so on fall-back
// days a repeated local hour is evaluated twice, and a skipped hour simply never occurs.
function isOpenAt(windows: readonly CallingWindow[], zone: IANAZone, t: number): boolean {
  if (windows.length === 0) return true;
  const local = DateTime.fromMillis(t, { zone });
  const ms = ((local.hour * 60 + local.minute) * 60 + local.second) * 1000 + local.millisecond;
  const today = local.weekday;
  const yesterday = prevDay(today);
  return windows.some((w) => {
    const s = (timeToMinutes(w.start, false) ?? NaN) * MINUTE_MS;
    const e = (timeToMinutes(w.end, true) ?? NaN) * MINUTE_MS;
    if (e > s) return w.days.includes(today) && ms >= s && ms < e;
    // Cross-midnight: the evening part belongs to today's entry, the early-morning part to yesterday's.
    return (w.days.includes(today) && ms >= s) || (w.days.includes(yesterday) && ms < e);
  });
}

export function isWithinCallingWindow(windows: readonly CallingWindow[], timeZone: string, at: Date): boolean {
  return isOpenAt(windows, requireZone(timeZone), requireInstant(at));
}

// Every real instant whose local wall-clock reading equals `naiveLocal` (a local time encoded as
// if it were UTC): none inside a spring-forward gap, two inside a fall-back overlap. Done by hand
// because luxon resolves ambiguous times using the offset in effect *now*, which is not stable.
function instantsForWallTime(zone: IANAZone, naiveLocal: number): number[] {
  const offsets = new Set([-DAY_MS, 0, DAY_MS].map((d) => zone.offset(naiveLocal + d)));
  const out = [...offsets]
    .map((o) => naiveLocal - o * MINUTE_MS)
    .filter((t) => zone.offset(t) === (naiveLocal - t) / MINUTE_MS);
  return out.sort((a, b) => a - b);
}

// UTC-offset changes in (from, to]. Sampling every 6h assumes zones never change offset twice
// within 6 hours, which holds for every real tz database zone.
function offsetTransitions(zone: IANAZone, from: number, to: number): number[] {
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

export function nextWindowOpening(windows: readonly CallingWindow[], timeZone: string, from: Date): Date | null {
  const zone = requireZone(timeZone);
  const t0 = requireInstant(from);
  if (isOpenAt(windows, zone, t0)) return new Date(t0);
  const limit = t0 + SEARCH_MS;
  // A window can only become open at a listed start time, or when a DST change moves the clock
  // into it (spring-forward past a start, or fall-back into the repeated hour).
  const candidates = offsetTransitions(zone, t0, limit);
  const local = DateTime.fromMillis(t0, { zone });
  const localMidnight = Date.UTC(local.year, local.month - 1, local.day);
  for (let i = -1; i <= 8; i++) {
    const naiveDay = localMidnight + i * DAY_MS;
    const weekday = ((new Date(naiveDay).getUTCDay() + 6) % 7) + 1;
    for (const w of windows) {
      if (!w.days.includes(weekday)) continue;
      const s = timeToMinutes(w.start, false);
      if (s !== null) candidates.push(...instantsForWallTime(zone, naiveDay + s * MINUTE_MS));
    }
  }
  candidates.sort((a, b) => a - b);
  const hit = candidates.find((t) => t > t0 && t <= limit && isOpenAt(windows, zone, t));
  return hit === undefined ? null : new Date(hit);
}
