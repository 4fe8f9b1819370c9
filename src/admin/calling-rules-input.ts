// The calling-rules settings as people write them (the dashboard's form fields, callctl's flags), read and checked in
// one set of words for both: each refusal names its field (CallingRulesProblem), and what is stored is checked against
// the TypeBox shapes of schemas/compliance.ts besides. Also the settings and an own rule in words (audit, callctl).
import { Value } from '@sinclair/typebox/value';
import { DAY_NAMES, EVERY_DAY } from '../../schemas/calling-window.js';
import {
  AgencyCallingRule,
  CALL_KINDS,
  CLOCK_TIME_PATTERN,
  END_TIME_PATTERN,
  type AgencyCallingRuleData,
} from '../../schemas/calling-rules.js';
import {
  AgencyCallingRules,
  CAP_PER_DAY_MAX,
  CAP_PER_WEEK_MAX,
  CAP_SCOPES,
  RULE_SETS,
  type AgencyCallingRulesData,
} from '../../schemas/compliance.js';
import { AdminError } from './errors.js';

/** The most characters of an own rule's name (the schema's maxLength). */
export const RULE_NAME_MAX = 100;

/**
 * A refusal of the settings or a rule: the dashboard shows each field's problem next to it (`fields`, every field
 * refused at once); callctl prints the first (the message).
 */
export class CallingRulesProblem extends AdminError {
  constructor(
    message: string,
    /** The field's name on the form: enabled, rule_sets, call_kinds, cap_24h, cap_7d, cap_scope, name, days, from, to. */
    readonly field: string,
    readonly fields: Record<string, string> = { [field]: message },
  ) {
    super(message);
  }
}

/** Checks of several fields, each run whatever the others found: `done` refuses with every problem at once. */
class Checks {
  readonly fields: Record<string, string> = {};
  run<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof CallingRulesProblem)) throw error;
      this.fields[error.field] ??= error.message;
      return undefined;
    }
  }
  done(): void {
    const [first] = Object.entries(this.fields);
    if (first) throw new CallingRulesProblem(first[1], first[0], this.fields);
  }
}

const refuse = (field: string, message: string): never => {
  throw new CallingRulesProblem(message, field);
};

// Control characters (C0, DEL, C1) and the line and paragraph separators: a name is one readable line.
// eslint-disable-next-line no-control-regex -- the point is to find them
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** An own rule's name: trimmed, 1 to 100 characters, one readable line. */
export function ruleName(written: string): string {
  const name = written.trim();
  if (name === '') refuse('name', 'Give the rule a name, such as "Office hours"');
  if (CONTROL.test(name)) refuse('name', 'A name must not contain control characters or line breaks');
  if ([...name].length > RULE_NAME_MAX) refuse('name', `A name has at most ${RULE_NAME_MAX} characters`);
  return name;
}

const DAY_WORDS = `mon, tue, wed, thu, fri, sat, sun, a range such as mon-fri, or ${EVERY_DAY}`;

/** Days written as a list (mon,tue), ranges (mon-fri, fri-mon) or `daily`; in week order, each once. */
export function ruleDays(written: string | readonly string[]): (typeof DAY_NAMES)[number][] {
  const items = (typeof written === 'string' ? [written] : written)
    .flatMap((item) => item.toLowerCase().split(','))
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) refuse('days', 'Choose at least one day');
  if (items.length > 14) refuse('days', `Too many days: use ${DAY_WORDS}`);
  const chosen = new Set<number>();
  for (const item of items) {
    if (item === EVERY_DAY) DAY_NAMES.forEach((_day, i) => chosen.add(i));
    else {
      const [from = '', to, ...rest] = item.split('-').map((part) => part.trim());
      const a = (DAY_NAMES as readonly string[]).indexOf(from);
      const b = to === undefined ? a : (DAY_NAMES as readonly string[]).indexOf(to);
      if (a < 0 || b < 0 || rest.length > 0) refuse('days', `Unknown days "${item.slice(0, 20)}": use ${DAY_WORDS}`);
      for (let d = a; ; d = (d + 1) % 7) {
        chosen.add(d);
        if (d === b) break;
      }
    }
  }
  return DAY_NAMES.filter((_day, i) => chosen.has(i));
}

/** A daily range "HH:MM" to "HH:MM" (24:00: to midnight), the start before the end. */
export function ruleRange(fromWritten: string, toWritten: string): { start: string; end: string } {
  const start = fromWritten.trim();
  const end = toWritten.trim();
  if (!new RegExp(CLOCK_TIME_PATTERN).test(start))
    refuse('from', 'Write the start as HH:MM in 24 hours, from 00:00 to 23:59');
  if (!new RegExp(END_TIME_PATTERN).test(end))
    refuse('to', 'Write the end as HH:MM in 24 hours, from 00:01 to 24:00 (midnight)');
  if (end <= start)
    refuse('to', `The end (${end}) must be after the start (${start}); a range across midnight is two rules`);
  return { start, end };
}

/** An own rule: the days allowed in one daily range, every other day not allowed, for the calls of `kinds`. */
export function ownRule(
  input: { name: string; days: string | readonly string[]; from: string; to: string },
  kinds: AgencyCallingRuleData['applies_to'],
): AgencyCallingRuleData {
  const checks = new Checks();
  const name = checks.run(() => ruleName(input.name))!;
  const days = checks.run(() => ruleDays(input.days))!;
  const range = checks.run(() => ruleRange(input.from, input.to))!;
  checks.done();
  const rule: AgencyCallingRuleData = {
    name,
    applies_to: [...kinds],
    hours: Object.fromEntries(days.map((day) => [day, { ...range }])),
    days_not_allowed: DAY_NAMES.filter((day) => !days.includes(day)),
    holidays: [],
  };
  if (!Value.Check(AgencyCallingRule, rule)) refuse('name', 'This rule cannot be stored: check its fields');
  return rule;
}

/** A cap written as a whole number from 1 to `max`, or none. */
function capCount(written: string | number | null, field: string, what: string, max: number): number | null {
  if (written === null) return null;
  const text = String(written).trim().toLowerCase();
  if (text === '' || text === 'none') return null;
  const count = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(count) || count < 1 || count > max)
    refuse(field, `The cap per ${what} is a whole number from 1 to ${max} (or none)`);
  return count;
}

/** Changes to an agency's settings; absent: unchanged. Caps as written: a number, or null / "none" for none. */
export interface AgencySettingsInput {
  enabled?: boolean;
  /** [] : none (only the agency's own rules). */
  ruleSets?: readonly string[];
  callKinds?: readonly string[];
  cap24h?: string | number | null;
  cap7d?: string | number | null;
  capScope?: string;
  consentRequired?: boolean;
}

function chosen<T extends string>(written: readonly string[], allowed: readonly T[], field: string, what: string) {
  const items = written.map((item) => item.trim().toLowerCase()).filter(Boolean);
  for (const item of items)
    if (!(allowed as readonly string[]).includes(item))
      refuse(field, `Unknown ${what} "${item.slice(0, 40)}": choose from ${allowed.join(', ')}`);
  return allowed.filter((value) => items.includes(value));
}

/** The agency's settings after `input`, checked (each refusal names its field). */
export function nextAgencySettings(
  current: AgencyCallingRulesData,
  input: AgencySettingsInput,
): AgencyCallingRulesData {
  const checks = new Checks();
  const ruleSets = input.ruleSets
    ? checks.run(() => chosen(input.ruleSets!, RULE_SETS, 'rule_sets', 'rule set'))!
    : current.rule_sets;
  const callKinds = checks.run(() => {
    const kinds = input.callKinds ? chosen(input.callKinds, CALL_KINDS, 'call_kinds', 'kind') : current.call_kinds;
    return kinds.length > 0 ? kinds : refuse('call_kinds', 'Choose at least one kind of call');
  })!;
  const perDay =
    input.cap24h === undefined
      ? (current.cap?.per_24h ?? null)
      : checks.run(() => capCount(input.cap24h!, 'cap_24h', '24 hours', CAP_PER_DAY_MAX))!;
  const perWeek =
    input.cap7d === undefined
      ? perDay === null
        ? null
        : (current.cap?.per_7d ?? null)
      : checks.run(() => capCount(input.cap7d!, 'cap_7d', '7 days', CAP_PER_WEEK_MAX))!;
  if (input.capScope !== undefined && !(CAP_SCOPES as readonly string[]).includes(input.capScope))
    checks.run(() => refuse('cap_scope', `The cap counts per ${CAP_SCOPES.join(' or per ')}`));
  checks.done();
  const scope = (input.capScope ?? current.cap?.scope ?? 'agency') as (typeof CAP_SCOPES)[number];
  if (perDay === null && perWeek !== null)
    refuse('cap_24h', 'A cap per 7 days needs a cap per 24 hours too (the smaller that allows the week)');
  if (perDay !== null && perWeek !== null && perWeek < perDay)
    refuse('cap_7d', `The cap per 7 days (${perWeek}) must be at least the cap per 24 hours (${perDay})`);
  const next: AgencyCallingRulesData = {
    enabled: input.enabled ?? current.enabled,
    rule_sets: ruleSets,
    call_kinds: callKinds,
    // An own rule applies to a call of every kind it lists: the agency's own hours govern all its calls.
    own_rules: current.own_rules.map((rule) => ({ ...rule, applies_to: [...callKinds] })),
    cap: perDay === null ? null : { per_24h: perDay, per_7d: perWeek, scope },
    consent_required: input.consentRequired ?? current.consent_required,
  };
  const [error] = Value.Errors(AgencyCallingRules, next);
  if (error) refuse(error.path.split('/')[1] ?? 'enabled', `These settings cannot be stored: ${error.message}`);
  return next;
}

/** Days in words: "mon-fri", "sat,sun", "daily". */
export function daysInWords(days: readonly string[]): string {
  const index = days.map((day) => (DAY_NAMES as readonly string[]).indexOf(day)).filter((i) => i >= 0);
  if (index.length === 7) return EVERY_DAY;
  const runs: string[] = [];
  for (let i = 0; i < index.length;) {
    let j = i;
    while (j + 1 < index.length && index[j + 1] === index[j]! + 1) j++;
    const [a, b] = [DAY_NAMES[index[i]!]!, DAY_NAMES[index[j]!]!];
    runs.push(j - i >= 2 ? `${a}-${b}` : j === i ? a : `${a},${b}`);
    i = j + 1;
  }
  return runs.join(',');
}

/** An own rule as the page and callctl show it: its days and daily range (each distinct range, when it has several). */
export function ownRuleView(rule: AgencyCallingRuleData) {
  const days = DAY_NAMES.filter((day) => rule.hours[day] && !rule.days_not_allowed.includes(day));
  const ranges = new Map<string, string[]>();
  for (const day of days) {
    const range = `${rule.hours[day]!.start}-${rule.hours[day]!.end}`;
    ranges.set(range, [...(ranges.get(range) ?? []), day]);
  }
  const text = [...ranges].map(([range, on]) => `${daysInWords(on)} ${range}`).join('; ') || 'no day allowed';
  const first = days[0] ? rule.hours[days[0]] : undefined;
  return { name: rule.name, days, from: first?.start ?? null, to: first?.end ?? null, hours: text };
}

/** The settings in a few words each, for the audit log's before and after. */
export function settingsSummary(settings: AgencyCallingRulesData) {
  const cap = settings.cap;
  return {
    enabled: settings.enabled,
    rule_sets: settings.rule_sets,
    call_kinds: settings.call_kinds,
    cap: cap && `${cap.per_24h} per 24 h${cap.per_7d === null ? '' : `, ${cap.per_7d} per 7 days`}, per ${cap.scope}`,
    consent_required: settings.consent_required,
  };
}
