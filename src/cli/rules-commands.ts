// callctl's calling-rules commands: show an account's rules (a client's are its agency's plus its own narrower hours),
// change an agency's settings (on or off, rule sets, kinds of call, the cap per number, consent required), and add or
// remove an own rule of hours (an agency's or a client's). Thin over src/admin/calling-rules.ts, audited as the
// operator's; the dashboard's Calling rules page says the same in the same words.
import { OPERATOR } from '../admin/accounts.js';
import {
  putCallingHours,
  removeCallingHours,
  setCallingRules,
  showCallingRules,
  type AgencySettingsInput,
} from '../admin/calling-rules.js';
import { CALL_KINDS } from '../../schemas/calling-rules.js';
import { CAP_PER_DAY_MAX, CAP_PER_WEEK_MAX, OWN_RULES_MAX } from '../../schemas/compliance.js';
import type { Command, Result } from './command-types.js';
import type { Values } from './flags.js';

// Mistakes the command line alone shows are usage errors (exit 2); UsageError is not imported from commands.ts
// (which imports this file), so the checks throw their own.
class RulesUsageError extends Error {
  override name = 'UsageError';
}

const account = (values: Values) => values.account ?? '';

function onOff(values: Values, flag: 'enabled' | 'consent-required'): boolean | undefined {
  const value = values[flag];
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new RulesUsageError(`--${flag}: expected on or off, not "${value}"`);
  return value === 'on';
}

/** A comma-separated list; `none` (or nothing) is the empty list. */
const list = (value: string | undefined) =>
  value === undefined ? undefined : value.trim().toLowerCase() === 'none' ? [] : value.split(',');

const SETTING_FLAGS = ['enabled', 'rule-sets', 'kinds', 'cap-24h', 'cap-7d', 'cap-scope', 'consent-required'] as const;

/** The settings the flags change (checked by src/admin, which words each refusal). */
function settingsOf(values: Values): AgencySettingsInput {
  return {
    ...(values.enabled !== undefined && { enabled: onOff(values, 'enabled') }),
    ...(values['rule-sets'] !== undefined && { ruleSets: list(values['rule-sets']) }),
    ...(values.kinds !== undefined && {
      callKinds: values.kinds.trim() === 'all' ? [...CALL_KINDS] : list(values.kinds),
    }),
    ...(values['cap-24h'] !== undefined && { cap24h: values['cap-24h'] }),
    ...(values['cap-7d'] !== undefined && { cap7d: values['cap-7d'] }),
    ...(values['cap-scope'] !== undefined && { capScope: values['cap-scope'] }),
    ...(values['consent-required'] !== undefined && { consentRequired: onOff(values, 'consent-required') }),
  };
}

type Hours = { name: string; hours: string }[];

/** `rules show` for people: the settings, then each list of own hours. */
function showHuman(result: Result): string {
  const settings = result.settings as Record<string, unknown> & {
    cap: { per_24h: number; per_7d: number | null; scope: string } | null;
  };
  const cap = settings.cap;
  const hours = (rules: Hours) => (rules.length === 0 ? ['  (none)'] : rules.map((r) => `  ${r.name}: ${r.hours}`));
  const lines = [
    `Calling rules of ${String(result.account_name)} (${String(result.account_id)}, ${String(result.account_kind)})`,
    result.account_kind === 'client'
      ? `Set by its agency ${String(result.agency_name)} (${String(result.agency_id)})`
      : '',
    `enabled:          ${settings.enabled ? 'on: every call is checked before each attempt' : 'off: calls are dialled as before'}`,
    `rule sets:        ${(settings.rule_sets as string[]).join(', ') || 'none (only own hours)'}`,
    `kinds of call:    ${(settings.call_kinds as string[]).join(', ')}`,
    `cap per number:   ${cap ? `${cap.per_24h} per 24 h${cap.per_7d === null ? '' : `, ${cap.per_7d} per 7 days`}, counted per ${cap.scope}` : 'none (the laws’ own caps only)'}`,
    `consent required: ${settings.consent_required ? 'yes' : 'no'}`,
    `rules version:    ${String(result.rules_version)}`,
    "The agency's own hours:",
    ...hours(result.agency_hours as Hours),
  ].filter(Boolean);
  if (result.client_hours) lines.push("The client's own hours:", ...hours(result.client_hours as Hours));
  lines.push('This helps you comply; it is not legal advice.');
  return `${lines.join('\n')}\n`;
}

export const RULES_COMMANDS: Command[] = [
  {
    words: ['rules', 'show'],
    args: [],
    flags: ['account'],
    required: ['account'],
    usage: 'callctl rules show --account <account-id>',
    summary:
      "An account's calling rules: its agency's settings (a client's are its agency's) and the own hours of the agency and (a client) of the client",
    human: showHuman,
    run: ({ storage }, _args, values) => showCallingRules(storage, account(values), OPERATOR),
  },
  {
    words: ['rules', 'set'],
    args: [],
    flags: ['account', ...SETTING_FLAGS],
    required: ['account'],
    usage:
      'callctl rules set --account <agency-id> [--enabled on|off] [--rule-sets us,ca|none] [--kinds <kinds>|all]\n' +
      '                  [--cap-24h <n>|none] [--cap-7d <n>|none] [--cap-scope agency|account] [--consent-required on|off]',
    summary:
      "Change an agency's calling rules (its clients follow them); flags not given are kept. Off (the default): calls are dialled as before; on: every call of the agency and its clients is checked before each attempt",
    examples: ['callctl rules set --account <agency-id> --enabled on --rule-sets us --cap-24h 3 --cap-scope agency'],
    check: (_args, values) => {
      if (!SETTING_FLAGS.some((flag) => values[flag] !== undefined))
        throw new RulesUsageError(`Nothing to change: give one of ${SETTING_FLAGS.map((f) => `--${f}`).join(', ')}`);
      settingsOf(values);
    },
    notice: (result) => (result.changed === false ? 'These were the settings already: nothing changed.' : undefined),
    human: (result) => showHuman(result),
    run: ({ storage, now }, _args, values) =>
      setCallingRules(storage, {
        accountId: account(values),
        settings: settingsOf(values),
        actor: OPERATOR,
        now: now(),
      }),
  },
  {
    words: ['rules', 'hours', 'add'],
    args: [],
    flags: ['account', 'name', 'days', 'from', 'to', 'replace'],
    required: ['account', 'name', 'days', 'from', 'to'],
    usage:
      'callctl rules hours add --account <account-id> --name <name> --days <days> --from HH:MM --to HH:MM [--replace]',
    summary: `Add an own rule of hours to an agency (all its calls and its clients') or a client (its own calls, beside its agency's): calls only on those days, from..to in the callee's local time; at most ${OWN_RULES_MAX} per account, names unique; --replace changes the rule of that name`,
    examples: [
      'callctl rules hours add --account <account-id> --name "Office hours" --days mon-fri --from 10:00 --to 18:00',
    ],
    run: ({ storage, now }, _args, values) =>
      putCallingHours(storage, {
        accountId: account(values),
        hours: { name: values.name ?? '', days: values.days ?? '', from: values.from ?? '', to: values.to ?? '' },
        replace: values.replace === true,
        actor: OPERATOR,
        now: now(),
      }),
  },
  {
    words: ['rules', 'hours', 'remove'],
    args: [],
    flags: ['account', 'name'],
    required: ['account', 'name'],
    usage: 'callctl rules hours remove --account <account-id> --name <name>',
    summary: "Remove an account's own rule of hours by its name (any case)",
    notice: (result) => (result.removed === false ? 'There was no rule of that name: nothing changed.' : undefined),
    run: ({ storage, now }, _args, values) =>
      removeCallingHours(storage, { accountId: account(values), name: values.name ?? '', actor: OPERATOR, now: now() }),
  },
];

/** The flags of these commands (added to callctl's option set in flags.ts). */
export const RULES_FLAG_HELP = {
  enabled: { value: 'on|off', help: 'rules set: on, every call is checked before each attempt; off, as before' },
  'rule-sets': { value: 'us,ca|none', help: 'rules set: the laws applied (us: federal and states; ca: Canada)' },
  kinds: {
    value: '<kinds>|all',
    help: 'rules set: what the calls are, comma-separated: telephone_solicitation, telemarketing, automated (all: the three)',
  },
  'cap-24h': {
    value: '<n>|none',
    help: `rules set: most dial attempts to one number per 24 h, 1 to ${CAP_PER_DAY_MAX}`,
  },
  'cap-7d': {
    value: '<n>|none',
    help: `rules set: most dial attempts to one number per 7 days, 1 to ${CAP_PER_WEEK_MAX}`,
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
