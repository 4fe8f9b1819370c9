// callctl's calling-rules commands: show an account's rules (a client's are its agency's plus its own narrower hours),
// change them (an agency: on or off, rule sets, kinds of call, the cap per number, consent required, and its own hours;
// a client: only its own narrower hours), and add or remove one own rule of hours. Thin over
// src/admin/calling-rules.ts, audited as the operator's; the dashboard's Calling rules page says the same in the same
// words. `--hours` takes an agent's `--window` words ("<days> HH:MM-HH:MM"), read by the same parser.
import { OPERATOR } from '../admin/accounts.js';
import {
  putCallingHours,
  removeCallingHours,
  setCallingRules,
  setOwnCallingHours,
  showCallingRules,
  type AgencySettingsInput,
  type OwnHoursInput,
} from '../admin/calling-rules.js';
import { CallingRulesProblem, ownRule } from '../admin/calling-rules-input.js';
import { findAccount } from '../admin/reach.js';
import { CALL_KINDS } from '../../schemas/calling-rules.js';
import { DAY_NAMES } from '../../schemas/calling-window.js';
import { CAP_PER_DAY_MAX, CAP_PER_WEEK_MAX, OWN_RULES_MAX } from '../../schemas/compliance.js';
import { CallingWindowError, parseCallingWindow } from '../domain/calling-window.js';
import type { Command, Result } from './command-types.js';
import type { Values } from './flags.js';
import { UsageError } from './usage-error.js';

const arg = (args: string[], index: number): string => args[index] ?? '';

function onOff(values: Values, flag: 'consent-required'): boolean | undefined {
  const value = values[flag];
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${flag}: expected on or off, not "${value}"`);
  return value === 'on';
}

/** A comma-separated list; `none` (or nothing) is the empty list. */
const list = (value: string | undefined) =>
  value === undefined ? undefined : value.trim().toLowerCase() === 'none' ? [] : value.split(',');

/** `--cap <n>/24h` (the count checked by src/admin, in its words), or none: no cap. */
function capPerDay(value: string): string {
  const text = value.trim().toLowerCase();
  if (text === 'none') return 'none';
  const match = /^([0-9]+)\s*\/\s*24h$/.exec(text);
  if (!match) throw new UsageError(`--cap: expected <n>/24h (e.g. 3/24h) or none, not "${value}"`);
  return match[1]!;
}

/** The flags that change an agency's settings (a client has none of its own). */
const SETTING_FLAGS = ['on', 'off', 'rule-sets', 'kinds', 'cap', 'cap-7d', 'cap-scope', 'consent-required'] as const;

/** The settings the flags change (checked by src/admin, which words each refusal). */
function settingsOf(values: Values): AgencySettingsInput {
  if (values.on && values.off) throw new UsageError('--on and --off: give one of them');
  return {
    ...((values.on || values.off) && { enabled: values.on === true }),
    ...(values['rule-sets'] !== undefined && { ruleSets: list(values['rule-sets']) }),
    ...(values.kinds !== undefined && {
      callKinds: values.kinds.trim() === 'all' ? [...CALL_KINDS] : list(values.kinds),
    }),
    ...(values.cap !== undefined && { cap24h: capPerDay(values.cap) }),
    ...(values['cap-7d'] !== undefined && { cap7d: values['cap-7d'] }),
    ...(values['cap-scope'] !== undefined && { capScope: values['cap-scope'] }),
    ...(values['consent-required'] !== undefined && { consentRequired: onOff(values, 'consent-required') }),
  };
}

const hasSettings = (values: Values) => SETTING_FLAGS.some((flag) => values[flag] !== undefined);

/**
 * `--hours` as own rules, named "Hours 1", "Hours 2", ... in the order given; `--hours none` alone: none; undefined
 * when not given. Every value is checked here as src/admin checks it, so a wrong one is a usage error and changes
 * nothing (a range across midnight is two values: an own rule's range ends after it starts).
 */
function hoursOf(values: Values): OwnHoursInput[] | undefined {
  const written = values.hours;
  if (written === undefined) return undefined;
  if (written.some((w) => w.trim().toLowerCase() === 'none')) {
    if (written.length > 1) throw new UsageError('--hours none (no own hours) cannot be given with other hours');
    return [];
  }
  if (written.length > OWN_RULES_MAX)
    throw new UsageError(`--hours: an account has at most ${OWN_RULES_MAX} rules of its own`);
  return written.map((text, i) => {
    try {
      const window = parseCallingWindow(text);
      const hours = {
        name: `Hours ${i + 1}`,
        days: window.days.map((day) => DAY_NAMES[day - 1]!),
        from: window.start,
        to: window.end,
      };
      ownRule(hours, [...CALL_KINDS]);
      return hours;
    } catch (error) {
      if (error instanceof CallingWindowError) throw new UsageError(`--hours: ${error.message}`);
      if (error instanceof CallingRulesProblem) throw new UsageError(`--hours "${text}": ${error.message}`);
      throw error;
    }
  });
}

type Hours = { name: string; hours: string }[];

/** `rules show` and `rules set` for people: the settings, then each list of own hours. */
function showHuman(result: Result): string {
  const rules = result.rules as Record<string, unknown>;
  const settings = rules.settings as Record<string, unknown> & {
    cap: { per_24h: number; per_7d: number | null; scope: string } | null;
  };
  const cap = settings.cap;
  const hours = (list: Hours) => (list.length === 0 ? ['  (none)'] : list.map((r) => `  ${r.name}: ${r.hours}`));
  const lines = [
    `Calling rules of ${String(rules.account_name)} (${String(rules.account_id)}, ${String(rules.account_kind)})`,
    rules.account_kind === 'client'
      ? `Set by its agency ${String(rules.agency_name)} (${String(rules.agency_id)})`
      : '',
    `enabled:          ${settings.enabled ? 'on: every call is checked before each attempt' : 'off: calls are dialled as before'}`,
    `rule sets:        ${(settings.rule_sets as string[]).join(', ') || 'none (only own hours)'}`,
    `kinds of call:    ${(settings.call_kinds as string[]).join(', ')}`,
    `cap per number:   ${cap ? `${cap.per_24h} per 24 h${cap.per_7d === null ? '' : `, ${cap.per_7d} per 7 days`}, counted per ${cap.scope}` : 'none (the laws’ own caps only)'}`,
    `consent required: ${settings.consent_required ? 'yes' : 'no'}`,
    `rules version:    ${String(rules.rules_version)}`,
    "The agency's own hours:",
    ...hours(rules.agency_hours as Hours),
  ].filter(Boolean);
  if (rules.client_hours) lines.push("The client's own hours:", ...hours(rules.client_hours as Hours));
  lines.push('This helps you comply; it is not legal advice.');
  return `${lines.join('\n')}\n`;
}

export const RULES_COMMANDS: Command[] = [
  {
    words: ['rules', 'show'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl rules show <account-id>',
    summary:
      "An account's calling rules, as {\"rules\": {...}}: its agency's settings (a client's are its agency's) and the own hours of the agency and (a client) of the client",
    human: showHuman,
    run: async ({ storage }, args) => ({ rules: await showCallingRules(storage, arg(args, 0), OPERATOR) }),
  },
  {
    words: ['rules', 'set'],
    args: ['account-id'],
    flags: ['hours', ...SETTING_FLAGS],
    usage:
      'callctl rules set <account-id> [--on|--off] [--rule-sets us,ca|none] [--hours "<days> HH:MM-HH:MM"]... [--cap <n>/24h]\n' +
      '                  [--cap-7d <n>] [--cap-scope agency|account] [--consent-required on|off] [--kinds <kinds>|all]',
    summary:
      'Change an account\'s calling rules; flags not given are kept; prints {"rules": {...}, "changed"}. An agency: all settings (its clients follow them); off (the default), calls are dialled as before; on, every call of the agency and its clients is checked before each attempt. A client: only --hours, its own narrower hours. --hours replaces all the account\'s own hours (named Hours 1, Hours 2, ...); --hours none removes them',
    examples: [
      'callctl rules set <agency-id> --on --rule-sets us --cap 3/24h --cap-7d 10 --cap-scope agency',
      'callctl rules set <account-id> --hours "mon-fri 09:00-17:00" --hours "sat 10:00-14:00"',
      'callctl rules set <client-id> --hours none',
    ],
    check: (_args, values) => {
      if (values.hours === undefined && !hasSettings(values))
        throw new UsageError(
          `Nothing to change: give one of ${['hours', ...SETTING_FLAGS].map((f) => `--${f}`).join(', ')}`,
        );
      settingsOf(values);
      hoursOf(values);
    },
    notice: (result) => (result.changed === false ? 'These were the rules already: nothing changed.' : undefined),
    human: showHuman,
    run: async ({ storage, now }, args, values) => {
      const account = await findAccount(storage, arg(args, 0), OPERATOR);
      if (account.kind !== 'agency' && hasSettings(values))
        throw new UsageError(
          `${account.id} is a client: only --hours (its own narrower hours) is set on a client; its other calling rules are its agency's (${account.agencyId ?? 'none'}): set them there`,
        );
      let changed = false;
      // The settings first: a refusal of them (src/admin's words) then changes nothing; the hours were checked already.
      if (hasSettings(values)) {
        const input = { accountId: account.id, settings: settingsOf(values), actor: OPERATOR, now: now() };
        changed = (await setCallingRules(storage, input)).changed;
      }
      const hours = hoursOf(values);
      if (hours !== undefined) {
        const input = { accountId: account.id, hours, actor: OPERATOR, now: now() };
        changed = (await setOwnCallingHours(storage, input)).changed || changed;
      }
      return { rules: await showCallingRules(storage, account.id, OPERATOR), changed };
    },
  },
  {
    words: ['rules', 'hours', 'add'],
    args: ['account-id'],
    flags: ['name', 'days', 'from', 'to', 'replace'],
    required: ['name', 'days', 'from', 'to'],
    usage: 'callctl rules hours add <account-id> --name <name> --days <days> --from HH:MM --to HH:MM [--replace]',
    summary: `Add one own rule of hours to an agency (all its calls and its clients') or a client (its own calls, beside its agency's), keeping the others: calls only on those days, from..to in the callee's local time; at most ${OWN_RULES_MAX} per account, names unique; --replace changes the rule of that name`,
    examples: ['callctl rules hours add <account-id> --name "Office hours" --days mon-fri --from 10:00 --to 18:00'],
    run: ({ storage, now }, args, values) =>
      putCallingHours(storage, {
        accountId: arg(args, 0),
        hours: { name: values.name ?? '', days: values.days ?? '', from: values.from ?? '', to: values.to ?? '' },
        replace: values.replace === true,
        actor: OPERATOR,
        now: now(),
      }),
  },
  {
    words: ['rules', 'hours', 'remove'],
    args: ['account-id'],
    flags: ['name'],
    required: ['name'],
    usage: 'callctl rules hours remove <account-id> --name <name>',
    summary: "Remove one of an account's own rules of hours by its name (any case)",
    notice: (result) => (result.removed === false ? 'There was no rule of that name: nothing changed.' : undefined),
    run: ({ storage, now }, args, values) =>
      removeCallingHours(storage, { accountId: arg(args, 0), name: values.name ?? '', actor: OPERATOR, now: now() }),
  },
];

/** The flags of these commands (added to callctl's option set in flags.ts). */
export const RULES_FLAG_HELP = {
  on: { value: '', help: 'rules set: switch the calling rules on: every call is checked before each attempt' },
  off: { value: '', help: 'rules set: switch them off: calls are dialled as before (the default)' },
  'rule-sets': { value: 'us,ca|none', help: 'rules set: the laws applied (us: federal and states; ca: Canada)' },
  hours: {
    value: '"<days> HH:MM-HH:MM"',
    help: `rules set: an own rule of hours, in the callee's local time (days: mon-fri, sat,sun, daily; the end after the start, 24:00 for midnight); repeat for more, at most ${OWN_RULES_MAX}; replaces all the account's own hours; none: no own hours`,
  },
  kinds: {
    value: '<kinds>|all',
    help: 'rules set: what the calls are, comma-separated: telephone_solicitation, telemarketing, automated (all: the three)',
  },
  cap: {
    value: '<n>/24h|none',
    help: `rules set: most dial attempts to one number per 24 h, 1 to ${CAP_PER_DAY_MAX}, e.g. 3/24h; none: no cap`,
  },
  'cap-7d': {
    value: '<n>|none',
    help: `rules set: most dial attempts to one number per 7 days, 1 to ${CAP_PER_WEEK_MAX}, at least the cap per 24 h (needs one, --cap or already set); none: no 7-day cap`,
  },
  'cap-scope': {
    value: 'agency|account',
    help: 'rules set: count the cap across the agency and all its clients, or per account',
  },
  'consent-required': { value: 'on|off', help: 'rules set: every trigger needs a consent record' },
  days: { value: '<days>', help: 'rules hours add: mon,tue,... or a range such as mon-fri, or daily' },
  from: { value: 'HH:MM', help: "rules hours add: the first minute allowed, the callee's local time" },
  to: { value: 'HH:MM', help: 'rules hours add: the end (excluded), after --from; 24:00 for midnight' },
  replace: { value: '', help: 'rules hours add: replace the rule of that name' },
};
