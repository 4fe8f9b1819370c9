// A simulated year of triggers against a reference (issue 48, point 7): a plain minute-by-minute reading of every
// candidate zone's wall clock (Intl, not the engine's luxon) and of every rule finds no moment the engine allows
// that a rule refuses, and no earlier allowed minute than the engine's nextAllowedAt.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  AgencyCallingRuleData,
  CallingRuleData,
  CallingRulesData,
  HolidayData,
} from '../../schemas/calling-rules.js';
import type { Candidate } from '../../src/compliance/candidates.js';
import { evaluate, type CallKindName, type RuleSet } from '../../src/compliance/evaluate.js';

const RULES = (
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../src/compliance/calling-rules.json'), 'utf8'),
  ) as CallingRulesData
).rules;

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const SEARCH_DAYS = 14;
const YEAR_START = Date.UTC(2056, 0, 1);
const YEAR_END = Date.UTC(2057, 0, 1);
/** The reference reads every minute from the year's start to past the last search's end. */
const MINUTES = (YEAR_END - YEAR_START) / MINUTE + (SEARCH_DAYS + 2) * 1440;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

// ---- The reference: the callee's wall clock for every minute, by Intl ----

const wallCache = new Map<string, Float64Array>();

/** For each minute of the span, the wall-clock reading as if it were UTC (ms). */
function wallClock(zone: string): Float64Array {
  const cached = wallCache.get(zone);
  if (cached !== undefined) return cached;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const offset = (t: number) => {
    const p = Object.fromEntries(format.formatToParts(t).map((part) => [part.type, Number(part.value)]));
    return Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day, p.hour, p.minute) - t;
  };
  const out = new Float64Array(MINUTES);
  for (let hour = 0; hour < MINUTES; hour += 60) {
    const start = YEAR_START + hour * MINUTE;
    const first = offset(start);
    // No zone changes its offset twice within an hour: one offset at both ends holds for the whole hour.
    const same = first === offset(start + 59 * MINUTE);
    for (let i = hour; i < Math.min(hour + 60, MINUTES); i++) {
      const t = YEAR_START + i * MINUTE;
      out[i] = t + (same ? first : offset(t));
    }
  }
  wallCache.set(zone, out);
  return out;
}

/** Easter Sunday by Gauss's method with its corrections (another method than the engine's). */
function easter(year: number): number {
  const a = year % 19;
  const b = year % 4;
  const c = year % 7;
  const k = Math.floor(year / 100);
  const p = Math.floor((13 + 8 * k) / 25);
  const q = Math.floor(k / 4);
  const m = (15 - p + k - q) % 30;
  const n = (4 + k - q) % 7;
  const d = (19 * a + m) % 30;
  const e = (2 * b + 4 * c + 6 * d + n) % 7;
  if (d === 29 && e === 6) return Date.UTC(year, 3, 19);
  if (d === 28 && e === 6 && (11 * m + 11) % 30 < 19) return Date.UTC(year, 3, 18);
  return Date.UTC(year, 2, 22 + d + e);
}

const weekdayOf = (naive: number) => (new Date(naive).getUTCDay() + 6) % 7;
/** Days since 1970-01-01 of a naive instant: the reference compares days as numbers, not text. */
const dayIndex = (naive: number) => Math.floor(naive / DAY);

/** The closed days of a holiday list, as day indexes, for 2055-2058. */
function closedDays(holidays: readonly HolidayData[]): Set<number> {
  const out = new Set<number>();
  for (let year = 2055; year <= 2058; year++) {
    for (const h of holidays) {
      if ((h.years === 'even' && year % 2) || (h.years === 'odd' && year % 2 === 0)) continue;
      let day: number | undefined;
      const date = h.date;
      if (date.kind === 'fixed') day = Date.UTC(year, date.month - 1, date.day);
      if (date.kind === 'easter_offset') day = easter(year) + date.days * DAY;
      if (date.kind === 'nth_weekday') {
        const matches: number[] = [];
        for (let d = Date.UTC(year, date.month - 1, 1); new Date(d).getUTCMonth() === date.month - 1; d += DAY) {
          if (DAYS[weekdayOf(d)] === date.weekday) matches.push(d);
        }
        day = date.n === -1 ? matches.at(-1) : matches[date.n - 1];
      }
      if (day === undefined) continue;
      day += (h.offset_days ?? 0) * DAY;
      out.add(dayIndex(day));
      const wd = weekdayOf(day);
      const seen = h.also_observed ?? [];
      if (wd === 5 && seen.includes('saturday_to_friday')) out.add(dayIndex(day - DAY));
      if (wd === 5 && seen.includes('saturday_to_monday')) out.add(dayIndex(day + 2 * DAY));
      if (wd === 6 && seen.includes('sunday_to_monday')) out.add(dayIndex(day + DAY));
      if (wd >= 1 && wd <= 4 && seen.includes('midweek_to_preceding_monday')) out.add(dayIndex(day - wd * DAY));
    }
  }
  return out;
}

type AnyRule = Pick<CallingRuleData, 'hours' | 'days_not_allowed' | 'holidays'> & { effective_from?: string };

/** A rule as minute ranges per weekday (null: closed), its closed days and its first day, all as numbers. */
function compile(rule: AnyRule) {
  const toMinutes = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3));
  const ranges = DAYS.map((day) => {
    const range = rule.hours[day];
    return range === undefined || rule.days_not_allowed.includes(day)
      ? null
      : ([toMinutes(range.start), toMinutes(range.end)] as const);
  });
  const from = rule.effective_from === undefined ? -Infinity : dayIndex(Date.parse(`${rule.effective_from}T00:00Z`));
  return { ranges, closed: closedDays(rule.holidays), from };
}

/** Whether the rule allows a dial at the wall-clock reading `naive`. */
function referenceAllows(rule: ReturnType<typeof compile>, naive: number): boolean {
  const day = dayIndex(naive);
  if (day < rule.from) return true;
  const range = rule.ranges[(day + 3) % 7]; // 1970-01-01 was a Thursday
  if (range === null || range === undefined || rule.closed.has(day)) return false;
  const minute = Math.floor((naive - day * DAY) / MINUTE);
  return minute >= range[0] && minute < range[1];
}

/** For each minute of the span: allowed in every candidate zone by every applicable rule? */
function referenceYear(candidates: readonly Candidate[], set: RuleSet, kinds: readonly string[]): Uint8Array {
  const applies = (listed: readonly string[]) => listed.every((k) => kinds.includes(k));
  const allowed = new Uint8Array(MINUTES).fill(1);
  for (const candidate of candidates) {
    const rules: AnyRule[] = [
      ...set.rules.filter(
        (r) => (r.region === candidate.region || candidate.region.startsWith(`${r.region}-`)) && applies(r.applies_to),
      ),
      ...(set.agencyRules ?? []).filter((r) => applies(r.applies_to)),
    ];
    for (const zone of candidate.timezones) {
      const wall = wallClock(zone);
      for (const rule of rules.map(compile)) {
        for (let i = 0; i < MINUTES; i++) {
          if (allowed[i] === 1 && !referenceAllows(rule, wall[i] as number)) allowed[i] = 0;
        }
      }
    }
  }
  return allowed;
}

/** For each minute, the first allowed minute at or after it (MINUTES when none). */
function nextAllowedMinute(allowed: Uint8Array): Int32Array {
  const next = new Int32Array(MINUTES);
  let upcoming = MINUTES;
  for (let i = MINUTES - 1; i >= 0; i--) {
    if (allowed[i] === 1) upcoming = i;
    next[i] = upcoming;
  }
  return next;
}

// ---- The scenarios: places a callee may be, the rules, the kinds of call ----

const OWN: AgencyCallingRuleData = {
  name: 'Office hours',
  applies_to: ['automated'],
  hours: {
    mon: { start: '10:00', end: '18:00' },
    tue: { start: '10:00', end: '18:00' },
    wed: { start: '10:00', end: '18:00' },
    thu: { start: '10:00', end: '18:00' },
    fri: { start: '10:00', end: '18:00' },
    sat: { start: '12:00', end: '16:30' },
  },
  days_not_allowed: ['sun'],
  holidays: [
    { name: 'Independence Day', date: { kind: 'fixed', month: 7, day: 4 }, also_observed: ['sunday_to_monday'] },
    { name: 'Thanksgiving', date: { kind: 'nth_weekday', month: 11, weekday: 'thu', n: 4 }, offset_days: 1 },
    { name: 'Memorial Day', date: { kind: 'nth_weekday', month: 5, weekday: 'mon', n: -1 } },
  ],
};
const NIGHT: AgencyCallingRuleData = {
  name: 'Night line',
  applies_to: ['automated'],
  hours: Object.fromEntries(DAYS.map((d) => [d, { start: '02:15', end: '03:30' }])),
  days_not_allowed: [],
  holidays: [],
};

const SCENARIOS: { name: string; candidates: Candidate[]; set: RuleSet; kinds: CallKindName[] }[] = [
  {
    name: '850 Florida in Eastern and Central',
    candidates: [{ region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] }],
    set: { rules: RULES },
    kinds: ['telephone_solicitation', 'automated'],
  },
  {
    name: '212 New York declared in Florida, with the agency’s own hours',
    candidates: [
      { region: 'US-NY', timezones: ['America/New_York'] },
      { region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] },
    ],
    set: { rules: RULES, agencyRules: [OWN] },
    kinds: ['telephone_solicitation', 'automated'],
  },
  {
    name: '605 South Dakota in three zones',
    candidates: [{ region: 'US-SD', timezones: ['America/Chicago', 'America/Denver', 'America/North_Dakota/Center'] }],
    set: { rules: RULES },
    kinds: ['telephone_solicitation', 'automated'],
  },
  {
    name: 'Alabama, Utah and Rhode Island holidays (Mardi Gras, Good Friday, Election Day)',
    candidates: [
      { region: 'US-AL', timezones: ['America/Chicago'] },
      { region: 'US-UT', timezones: ['America/Denver'] },
      { region: 'US-RI', timezones: ['America/New_York'] },
    ],
    set: { rules: RULES },
    kinds: ['telephone_solicitation', 'automated'],
  },
  {
    name: 'Canada across six zones, Newfoundland’s half hour included',
    candidates: [
      { region: 'CA-NL', timezones: ['America/St_Johns', 'America/Halifax'] },
      {
        region: 'CA-YT',
        timezones: ['America/Whitehorse', 'America/Vancouver', 'America/Edmonton', 'America/Toronto'],
      },
    ],
    set: { rules: RULES },
    kinds: ['telemarketing', 'automated'],
  },
  {
    name: 'a night range starting inside the spring-forward gap, across both DST changes',
    candidates: [{ region: 'US-NY', timezones: ['America/New_York'] }],
    set: { rules: [], agencyRules: [NIGHT] },
    kinds: ['automated'],
  },
];

describe('a year of triggers against the minute-by-minute reference', () => {
  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      () => {
        const allowed = referenceYear(scenario.candidates, scenario.set, scenario.kinds);
        const next = nextAllowedMinute(allowed);
        expect(allowed.includes(1), 'some minute of the year is allowed').toBe(true);
        const check = (t: number) => {
          const result = evaluate(scenario.candidates, scenario.set, new Date(t), scenario.kinds, SEARCH_DAYS);
          const minute = Math.floor((t - YEAR_START) / MINUTE);
          const when = new Date(t).toISOString();
          expect(result.allowed, `allowed at ${when}`).toBe(allowed[minute] === 1);
          const first = next[minute] as number;
          const expected = allowed[minute] === 1 ? t : YEAR_START + first * MINUTE;
          const inReach = first < MINUTES && expected <= t + SEARCH_DAYS * DAY;
          expect(result.nextAllowedAt?.getTime() ?? null, `next allowed after ${when}`).toBe(inReach ? expected : null);
          if (!result.allowed) expect(result.reasons.length, `reasons at ${when}`).toBeGreaterThan(0);
        };
        // A walk through the year at a step that drifts across every hour and weekday, then random moments.
        for (let t = YEAR_START + 17 * 1000; t < YEAR_END; t += 7 * 3_600_000 + 13 * MINUTE + 7_000) check(t);
        fc.assert(
          fc.property(fc.integer({ min: YEAR_START, max: YEAR_END - 1 }), (t) => check(t)),
          { numRuns: 150, seed: 48 },
        );
      },
      120_000,
    );
  }
});
