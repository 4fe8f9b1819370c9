// The calling rules an operator edits (src/compliance/calling-rules.json) hold their shape and their sources: every
// rule cites its law, section and a link, names a US or Canadian region, and allows well-formed hours (issue 48).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { DAY_NAMES } from '../../schemas/calling-window.js';
import {
  AgencyCallingRule,
  CallingRules,
  type AgencyCallingRuleData,
  type CallingRulesData,
} from '../../schemas/calling-rules.js';
import { TABLE_END, TABLE_START, renderRulesTable } from './calling-rules-table.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DATA_FILE = path.join(ROOT, 'src/compliance/calling-rules.json');
const DOC_FILE = path.join(ROOT, 'docs/calling-rules.md');

const minutes = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3));

function isCalendarDay(text: string): boolean {
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** Hours and days that the schema alone cannot check: an end after its start, each weekday said once. */
function hoursProblems(where: string, rule: Pick<AgencyCallingRuleData, 'hours' | 'days_not_allowed'>): string[] {
  const problems: string[] = [];
  for (const day of DAY_NAMES) {
    const range = rule.hours[day];
    const closed = rule.days_not_allowed.includes(day);
    if (range && closed) problems.push(`${where}: ${day} has hours and is in days_not_allowed`);
    if (!range && !closed) problems.push(`${where}: ${day} has no hours and is not in days_not_allowed`);
    if (range && minutes(range.end) <= minutes(range.start))
      problems.push(`${where}: ${day} ends (${range.end}) before or at its start (${range.start})`);
  }
  return problems;
}

/** Everything wrong with a rules file, one line each, naming the rule; empty when it is sound. */
function problems(data: unknown): string[] {
  const ids = (data as { rules?: { id?: unknown }[] } | null)?.rules?.map((rule) => rule?.id);
  // A schema error names the rule by its id as well as its index, so the operator finds it in the file.
  const found = [...Value.Errors(CallingRules, data)].map((e) => {
    const index = /^\/rules\/([0-9]+)/.exec(e.path)?.[1];
    const id = index === undefined ? undefined : ids?.[Number(index)];
    return `${typeof id === 'string' ? `${id} ` : ''}${e.path || '/'}: ${e.message}`;
  });
  if (found.length > 0) return found;
  const rules = data as CallingRulesData;
  if (!isCalendarDay(rules.effective_date)) found.push(`effective_date ${rules.effective_date} is not a day`);
  const seen = new Set<string>();
  for (const rule of rules.rules) {
    if (seen.has(rule.id)) found.push(`${rule.id}: the id is used twice`);
    seen.add(rule.id);
    found.push(...hoursProblems(rule.id, rule));
    if (!isCalendarDay(rule.citation.checked)) found.push(`${rule.id}: checked ${rule.citation.checked} is not a day`);
    if (rule.effective_from && !isCalendarDay(rule.effective_from))
      found.push(`${rule.id}: effective_from ${rule.effective_from} is not a day`);
    for (const holiday of rule.holidays) {
      // A fixed date must exist in a leap year at least (February 29 does).
      if (holiday.date.kind === 'fixed' && !isCalendarDay(`2056-${pad(holiday.date.month)}-${pad(holiday.date.day)}`))
        found.push(`${rule.id}: ${holiday.name} is on no day (${holiday.date.month}/${holiday.date.day})`);
    }
    if (!rule.holidays_complete && !rule.open_questions?.length)
      found.push(`${rule.id}: an incomplete holiday list must say what is missing in open_questions`);
    // A rule read only in a description of the law says what is left to confirm from the law's own words.
    if (rule.citation.source === 'summary' && !rule.open_questions?.length)
      found.push(`${rule.id}: a rule from a summary must say in open_questions what remains to confirm`);
  }
  return found;
}

const pad = (n: number) => String(n).padStart(2, '0');

async function loadRules(): Promise<CallingRulesData> {
  return JSON.parse(await readFile(DATA_FILE, 'utf8')) as CallingRulesData;
}

/** The path the schema's errors give a rule: /rules/<its index>. */
async function pathOf(id: string): Promise<string> {
  return `/rules/${(await loadRules()).rules.findIndex((rule) => rule.id === id)}`;
}

/** The file with one rule changed by `edit` (a deep copy: each case starts from the file as committed). */
async function withRule(id: string, edit: (rule: Record<string, unknown>) => void): Promise<unknown> {
  const data = structuredClone(await loadRules()) as unknown as { rules: Record<string, unknown>[] };
  const rule = data.rules.find((r) => r.id === id);
  if (!rule) throw new Error(`no rule ${id} in the file`);
  edit(rule);
  return data;
}

describe('calling rules data', () => {
  it('holds its schema, its hours and its dates', async () => {
    expect(problems(await loadRules())).toEqual([]);
  });

  it('has the federal rules of both countries', async () => {
    const regions = new Set((await loadRules()).rules.map((rule) => rule.region));
    expect(regions.has('US')).toBe(true);
    expect(regions.has('CA')).toBe(true);
  });

  it.each(['law', 'section', 'url', 'checked', 'source'])(
    'refuses a rule whose citation lacks its %s',
    async (field) => {
      const data = await withRule('us-fl-501-616-6', (rule) => {
        delete (rule.citation as Record<string, unknown>)[field];
      });
      expect(problems(data).join('\n')).toContain(`${await pathOf('us-fl-501-616-6')}/citation`);
    },
  );

  it('refuses a rule without a citation, or with an empty one', async () => {
    const without = await withRule('us-wa-19-158-040', (rule) => {
      delete rule.citation;
    });
    expect(problems(without).join('\n')).toMatch(/citation/);
    for (const field of ['law', 'section', 'url', 'checked']) {
      const empty = await withRule('us-wa-19-158-040', (rule) => {
        (rule.citation as Record<string, unknown>)[field] = '';
      });
      expect(problems(empty).join('\n'), field).toMatch(new RegExp(`citation/${field}`));
    }
    const notALink = await withRule('us-wa-19-158-040', (rule) => {
      (rule.citation as Record<string, unknown>).url = 'RCW 19.158.040';
    });
    expect(problems(notALink).join('\n')).toMatch(/citation\/url/);
  });

  it.each(['US-XX', 'US-ZZ', 'CA-XX', 'MX-JAL', 'FL', 'us-fl', 'US-FL ', ''])(
    'refuses the region %j',
    async (region) => {
      const data = await withRule('us-fl-501-616-6', (rule) => {
        rule.region = region;
      });
      expect(problems(data).join('\n')).toContain(`${await pathOf('us-fl-501-616-6')}/region`);
    },
  );

  it.each(['US', 'CA', 'US-DC', 'US-PR', 'US-VI', 'CA-QC', 'CA-NU'])('accepts the region %s', async (region) => {
    const data = await withRule('us-fl-501-616-6', (rule) => {
      rule.region = region;
    });
    expect(problems(data)).toEqual([]);
  });

  it.each([
    ['8:00', '20:00'],
    ['08:00', '20:0'],
    ['08:00', '25:00'],
    ['08:60', '20:00'],
    ['24:00', '24:00'],
    ['08:00 am', '20:00'],
  ])('refuses the malformed hours %s-%s', async (start, end) => {
    const data = await withRule('us-fl-501-616-6', (rule) => {
      (rule.hours as Record<string, unknown>).wed = { start, end };
    });
    expect(problems(data).join('\n')).toContain(`${await pathOf('us-fl-501-616-6')}/hours/wed`);
  });

  it.each([
    ['20:00', '08:00'],
    ['09:00', '09:00'],
  ])('refuses hours that end before or at their start: %s-%s', async (start, end) => {
    const data = await withRule('us-fl-501-616-6', (rule) => {
      (rule.hours as Record<string, unknown>).wed = { start, end };
    });
    expect(problems(data)).toEqual([`us-fl-501-616-6: wed ends (${end}) before or at its start (${start})`]);
  });

  it('accepts a day that runs to midnight', async () => {
    const data = await withRule('us-fl-501-616-6', (rule) => {
      (rule.hours as Record<string, unknown>).wed = { start: '00:00', end: '24:00' };
    });
    expect(problems(data)).toEqual([]);
  });

  it('says each weekday once: with hours, or in days_not_allowed', async () => {
    const both = await withRule('us-ms-77-3-723', (rule) => {
      (rule.hours as Record<string, unknown>).sun = { start: '08:00', end: '20:00' };
    });
    expect(problems(both)).toEqual(['us-ms-77-3-723: sun has hours and is in days_not_allowed']);
    const neither = await withRule('us-ms-77-3-723', (rule) => {
      rule.days_not_allowed = [];
    });
    expect(problems(neither)).toEqual(['us-ms-77-3-723: sun has no hours and is not in days_not_allowed']);
  });

  it('refuses a day that does not exist, an unknown call kind and a duplicate id', async () => {
    const badDay = await withRule('us-ut-13-25a-103', (rule) => {
      (rule.citation as Record<string, unknown>).checked = '2054-02-30';
    });
    expect(problems(badDay)).toEqual(['us-ut-13-25a-103: checked 2054-02-30 is not a day']);
    const badHoliday = await withRule('us-ut-13-25a-103', (rule) => {
      (rule.holidays as Record<string, unknown>[])[0]!.date = { kind: 'fixed', month: 4, day: 31 };
    });
    expect(problems(badHoliday)).toEqual(["us-ut-13-25a-103: New Year's Day is on no day (4/31)"]);
    const badKind = await withRule('us-ut-13-25a-103', (rule) => {
      rule.applies_to = ['robocall'];
    });
    expect(problems(badKind).join('\n')).toMatch(/applies_to/);
    const twice = await withRule('us-ut-13-25a-103', (rule) => {
      rule.id = 'us-fl-501-616-6';
    });
    expect(problems(twice)).toEqual(['us-fl-501-616-6: the id is used twice']);
  });

  it('refuses a rule from a summary that does not say what remains to confirm', async () => {
    const silent = await withRule('us-ok-775c-4', (rule) => {
      delete rule.open_questions;
    });
    expect(problems(silent)).toEqual([
      'us-ok-775c-4: a rule from a summary must say in open_questions what remains to confirm',
    ]);
    const unknownSource = await withRule('us-ok-775c-4', (rule) => {
      (rule.citation as Record<string, unknown>).source = 'statute';
    });
    expect(problems(unknownSource).join('\n')).toMatch(/citation\/source/);
  });

  it('holds the caps per number that the cap presets start from', async () => {
    const caps = Object.fromEntries(
      (await loadRules()).rules.filter((rule) => rule.cap).map((rule) => [rule.region, rule.cap]),
    );
    expect(caps).toMatchObject({
      'US-FL': { count: 3, window_hours: 24 },
      'US-MD': { count: 3, window_hours: 24 },
      'US-OK': { count: 3, window_hours: 24 },
      'US-ME': { count: 1, window_hours: 8 },
    });
  });

  it('refuses a cap without its window, and an incomplete holiday list that says nothing of what is missing', async () => {
    const cap = await withRule('us-fl-501-616-6', (rule) => {
      delete (rule.cap as Record<string, unknown>).window_hours;
    });
    expect(problems(cap).join('\n')).toMatch(/cap/);
    const silent = await withRule('us-la-45-811', (rule) => {
      delete rule.open_questions;
    });
    expect(problems(silent)).toEqual([
      'us-la-45-811: an incomplete holiday list must say what is missing in open_questions',
    ]);
  });
});

describe("an agency's own rule", () => {
  const example: AgencyCallingRuleData = {
    name: 'Office hours, no Sundays',
    applies_to: ['telephone_solicitation'],
    hours: Object.fromEntries(DAY_NAMES.filter((d) => d !== 'sun').map((d) => [d, { start: '10:00', end: '18:00' }])),
    days_not_allowed: ['sun'],
    holidays: [{ name: 'Christmas Day', date: { kind: 'fixed', month: 12, day: 25 } }],
  };

  it('takes the shape of a law’s rule without region or citation (10:00-18:00, no Sundays)', () => {
    expect([...Value.Errors(AgencyCallingRule, example)]).toEqual([]);
    expect(hoursProblems('agency', example)).toEqual([]);
  });

  it('is held to the same hours', () => {
    const late = { ...example, hours: { ...example.hours, mon: { start: '18:00', end: '10:00' } } };
    expect(Value.Check(AgencyCallingRule, late)).toBe(true);
    expect(hoursProblems('agency', late)).toEqual(['agency: mon ends (10:00) before or at its start (18:00)']);
    expect(Value.Check(AgencyCallingRule, { ...example, region: 'US-FL' })).toBe(false);
  });
});

describe('docs/calling-rules.md', () => {
  it('shows the rules table of the data file', async () => {
    const doc = await readFile(DOC_FILE, 'utf8');
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);
    const shown = start >= 0 && end > start ? doc.slice(start, end + TABLE_END.length) : '(no table markers)';
    const expected = renderRulesTable(await loadRules());
    // On a difference the message is the table to paste between the markers.
    expect(shown, `Paste into docs/calling-rules.md:\n${expected}\n`).toBe(expected);
  });
});
