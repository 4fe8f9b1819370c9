// One rule in one time zone: whether it allows a dial at an instant (by the callee's wall clock: weekday hours,
// days with no calls, holidays), why not in words, and the first instant from a moment on at which it allows one.
import { DAY_NAMES } from '../../schemas/calling-window.js';
import type { HolidayData, TimeRangeData } from '../../schemas/calling-rules.js';
import { holidayOn } from './holidays.js';
import {
  DAY_MS,
  MINUTE_MS,
  clockText,
  instantsForWallTime,
  localClock,
  type LocalClock,
  type Zone,
} from './zone-clock.js';

/** A rule as the engine applies it: a law's rule or an agency's own, with the words its reasons start with. */
export interface EngineRule {
  /** The law rule's id, or `agency:<name>` for an agency's own. */
  id: string;
  /** Who says so, first in a reason: the law's region (US, US-FL), or the agency rule's name. */
  label: string;
  hours: Partial<Record<(typeof DAY_NAMES)[number], TimeRangeData>>;
  days_not_allowed: readonly string[];
  holidays: readonly HolidayData[];
  /** The law applies from this local day on (YYYY-MM-DD). */
  effective_from?: string;
}

export type RuleVerdict =
  { allowed: true; inEffect: boolean; range: TimeRangeData | null } | { allowed: false; reason: string };

const DAY_WORDS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

export const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/** "08:00" -> "8:00", as a person writes an hour. */
const hourText = (clock: string) => clock.replace(/^0(\d)/, '$1');

export function rangeText(range: TimeRangeData): string {
  return `${hourText(range.start)}–${hourText(range.end)}`;
}

/** Whether `rule` allows a dial at the wall-clock reading `clock` in the zone `zoneName`, and why not. */
export function checkRule(rule: EngineRule, zoneName: string, clock: LocalClock): RuleVerdict {
  if (rule.effective_from !== undefined && clock.date < rule.effective_from) {
    return { allowed: true, inEffect: false, range: null };
  }
  const now = `${clockText(clock.minute)} now in ${zoneName}`;
  const dayName = DAY_NAMES[clock.weekday] as (typeof DAY_NAMES)[number];
  const dayWord = DAY_WORDS[clock.weekday] as string;
  const range = rule.hours[dayName];
  if (rule.days_not_allowed.includes(dayName) || range === undefined) {
    return { allowed: false, reason: `${rule.label}: no calls on ${dayWord}s, ${dayWord} ${now}` };
  }
  const holiday = holidayOn(rule.holidays, clock.year, clock.date);
  if (holiday !== null) {
    return { allowed: false, reason: `${rule.label}: no calls on ${holiday}, ${clock.date} ${now}` };
  }
  if (clock.minute < minutesOf(range.start) || clock.minute >= minutesOf(range.end)) {
    return { allowed: false, reason: `${rule.label}: ${rangeText(range)}, ${now}` };
  }
  return { allowed: true, inEffect: true, range };
}

export function allowsAt(rule: EngineRule, zone: Zone, zoneName: string, at: number): boolean {
  return checkRule(rule, zoneName, localClock(zone, at)).allowed;
}

/**
 * The first instant in [from, limit] at which `rule` allows a dial in `zone`, or null. A rule's answer only turns
 * to yes when the wall clock reaches a day's start (the one or two instants it reads that time) or when the clock
 * jumps (a DST change into or past a start), so those instants are the only ones to try after `from`.
 */
export function nextOpening(
  rule: EngineRule,
  zone: Zone,
  zoneName: string,
  from: number,
  limit: number,
): number | null {
  if (allowsAt(rule, zone, zoneName, from)) return from;
  const tries = zone.changes(from, limit);
  const first = localClock(zone, from);
  const firstMidnight = first.naive - first.minute * MINUTE_MS;
  const days = Math.ceil((limit - from) / DAY_MS) + 1;
  for (let i = 0; i <= days; i++) {
    const midnight = firstMidnight + i * DAY_MS;
    const dayName = DAY_NAMES[(first.weekday + i) % 7] as (typeof DAY_NAMES)[number];
    const range = rule.hours[dayName];
    if (range !== undefined) tries.push(...instantsForWallTime(zone, midnight + minutesOf(range.start) * MINUTE_MS));
  }
  tries.sort((a, b) => a - b);
  return tries.find((t) => t > from && t <= limit && allowsAt(rule, zone, zoneName, t)) ?? null;
}
