// The agent form's values (src/views/agent-form.eta): a new agent's, a stored agent's, or what was sent; its window
// rows (day boxes and from/to times, rows added and removed by buttons that save nothing); every field's problem in
// plain words, all at once, keyed by the field's id; and what the form asks of src/admin/agents.ts in callctl's terms
// (each filled row becomes callctl's "<days> <HH:MM>-<HH:MM>").
import {
  RETRY_WAIT_MAX_MINUTES,
  RETRY_WAITS_MAX,
  VOICEMAIL_NAME_PLACEHOLDER,
} from '../../../schemas/agent-settings.js';
import { DAY_NAMES } from '../../../schemas/calling-window.js';
import type { AgentForm } from '../../../schemas/dashboard/agents.js';
import {
  DEFAULT_RETRY_WAITS_MINUTES,
  MAX_ATTEMPTS,
  RETRYABLE_OUTCOMES,
  VOICEMAIL_MESSAGE_MAX,
  VOICEMAIL_POLICIES,
} from '../../../schemas/vocabulary.js';
import { type AgentInput } from '../../admin/agents.js';
import { callingWindowsSchemaCheck, CallingWindowError } from '../../domain/calling-window.js';
import { parseTypedNumber } from '../../domain/typed-phone-number.js';
import { phoneShown, type PhoneCountry } from './agent-caller-id.js';
import { canonicalTimeZone, canonicalZone } from '../../domain/time-zones.js';
import { OUTCOME_WORDS, retryOutcomes, retryWaits, VOICEMAIL_WORDS, type AgentReach } from '../format/agent.js';
import type { PageModels } from '../page-models.js';
import {
  handoffInput,
  handoffValuesOfAgent,
  handoffValuesOfForm,
  HANDOFF_RULES,
  NEW_HANDOFF,
} from './agent-form-handoff.js';

/** The most window rows a form holds (the schema's bound on repeated fields is higher). */
export const MAX_ROWS = 20;

type Day = (typeof DAY_NAMES)[number];

export interface WindowRow {
  days: Day[];
  from: string;
  to: string;
}

/** What the form shows in its fields: the page model's values (src/views/page-models.ts). */
export type FormValues = PageModels['agent-form']['values'];

/** A field's problem in words, by the field's id in the page (name, phone, w0-days, w0-from, retry_on, ...). */
export type FieldErrors = Record<string, string>;

const DAY_WORDS: Record<Day, { short: string; long: string }> = {
  mon: { short: 'Mon', long: 'Monday' },
  tue: { short: 'Tue', long: 'Tuesday' },
  wed: { short: 'Wed', long: 'Wednesday' },
  thu: { short: 'Thu', long: 'Thursday' },
  fri: { short: 'Fri', long: 'Friday' },
  sat: { short: 'Sat', long: 'Saturday' },
  sun: { short: 'Sun', long: 'Sunday' },
};

/** What the form states of its rules and offers as choices beyond the values. */
export const FORM_RULES = {
  attempts: Array.from({ length: MAX_ATTEMPTS }, (_, i) => String(i + 1)),
  outcomes: RETRYABLE_OUTCOMES.map((value) => ({ value, words: OUTCOME_WORDS[value] })),
  voicemail: VOICEMAIL_POLICIES.map((value) => ({ value, words: VOICEMAIL_WORDS[value] })),
  days: DAY_NAMES.map((value) => ({ value, ...DAY_WORDS[value] })),
  maxRows: MAX_ROWS,
  waitsMax: RETRY_WAITS_MAX,
  waitMax: RETRY_WAIT_MAX_MINUTES,
  messageMax: VOICEMAIL_MESSAGE_MAX,
  placeholder: VOICEMAIL_NAME_PLACEHOLDER,
  handoff: HANDOFF_RULES,
};

export const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

const waitsText = (waits: readonly number[]) => waits.join(', ');

/** A row with nothing in it: no day ticked, no time (a new row, and the one a new agent starts with). */
export const emptyRow = (): WindowRow => ({ days: [], from: '', to: '' });

/** A row as callctl's --window text; "to 00:00" is the end of the day. */
export const windowText = (row: WindowRow) =>
  `${row.days.join(',')} ${row.from}-${row.to === '00:00' ? '24:00' : row.to}`;

export const isEmptyRow = (row: WindowRow) => row.days.length === 0 && !row.from && !row.to;

/** A new agent's form: today's behaviour (one attempt, no detection, the agent's zone; UTC until a script says). */
export function newAgentValues(account: string): FormValues {
  return {
    name: '',
    phone: '',
    timezone: 'UTC',
    policy: 'queue',
    account,
    rows: [emptyRow()],
    windowTimezone: 'agent',
    maxAttempts: '1',
    retryOn: [],
    retryWaits: waitsText(DEFAULT_RETRY_WAITS_MINUTES),
    voicemail: 'off',
    voicemailMessage: '',
    consentRequired: 'off',
    ...NEW_HANDOFF,
  };
}

/**
 * The stored windows as rows. A time input cannot say 24:00: a window until the end of the day shows "to 00:00",
 * which the form reads back as 24:00 (the same window).
 */
function rowsOfAgent(stored: unknown): WindowRow[] {
  try {
    return callingWindowsSchemaCheck(stored).map((w) => ({
      days: w.days.map((d) => DAY_NAMES[d - 1]).filter((d): d is Day => d !== undefined),
      from: w.start,
      to: w.end === '24:00' ? '00:00' : w.end,
    }));
  } catch (error) {
    if (error instanceof CallingWindowError) return [];
    throw error;
  }
}

/** The edit form of a stored agent: its windows (one empty row when it has none), its zone by its canonical name. */
export function valuesOfAgent(
  agent: AgentReach &
    Parameters<typeof handoffValuesOfAgent>[0] & {
      name: string;
      phoneNumber: string | null;
      outsideWindowPolicy: string;
      accountId: string;
      callingWindows: unknown;
    },
): FormValues {
  const waits = retryWaits(agent.retryWaitsMinutes);
  const rows = rowsOfAgent(agent.callingWindows);
  return {
    name: agent.name,
    phone: agent.phoneNumber ?? '',
    timezone: canonicalZone(agent.timezone),
    policy: agent.outsideWindowPolicy,
    account: agent.accountId,
    rows: rows.length ? rows : [emptyRow()],
    windowTimezone: agent.windowTimezone,
    maxAttempts: String(agent.maxAttempts),
    retryOn: retryOutcomes(agent.retryOn),
    retryWaits: waitsText(waits.length ? waits : DEFAULT_RETRY_WAITS_MINUTES),
    voicemail: agent.voicemail,
    voicemailMessage: agent.voicemailMessage ?? '',
    consentRequired: agent.consentRequired ? 'on' : 'off',
    ...handoffValuesOfAgent(agent),
  };
}

/** The window rows as sent: times in page order, each ticked day as "<row>:<day>". */
export function rowsOfForm(body: AgentForm): WindowRow[] {
  const from = list(body.window_from);
  const to = list(body.window_to);
  const ticked = list(body.window_day).map((value) => {
    const [row = '', day = ''] = value.trim().toLowerCase().split(':');
    return { row: Number(row), day: day as Day };
  });
  const count = Math.min(MAX_ROWS, Math.max(from.length, to.length, ...ticked.map((t) => t.row + 1)));
  return Array.from({ length: count }, (_, i) => ({
    days: DAY_NAMES.filter((d) => ticked.some((t) => t.row === i && t.day === d)),
    from: (from[i] ?? '').trim(),
    to: (to[i] ?? '').trim(),
  }));
}

/** What the buttons of the form ask: save, or only show the form again with a row more or less. */
export type FormAction = { kind: 'save' } | { kind: 'add-window' } | { kind: 'remove-window'; row: number };

export function actionOf(body: AgentForm): FormAction {
  const action = body.action?.trim() ?? 'save';
  if (action === 'add-window') return { kind: 'add-window' };
  const remove = /^remove-window-(\d+)$/.exec(action);
  return remove ? { kind: 'remove-window', row: Number(remove[1]) } : { kind: 'save' };
}

/** The rows after an add or a remove (never none: a form without rows shows one empty row). */
export function rowsAfter(rows: WindowRow[], action: FormAction): WindowRow[] {
  if (action.kind === 'add-window') return rows.length >= MAX_ROWS ? rows : [...rows, emptyRow()];
  if (action.kind === 'remove-window') {
    const left = rows.filter((_, i) => i !== action.row);
    return left.length ? left : [emptyRow()];
  }
  return rows;
}

/** What was sent, to show again; a field the form always sends but did not falls back to `before`. */
export function valuesOfForm(
  body: AgentForm,
  rows: WindowRow[],
  account: string,
  before: FormValues,
  country: PhoneCountry,
): FormValues {
  return {
    name: body.name,
    phone: phoneShown(body.phone, country),
    // A zone by its canonical name (the one the select offers, and the one saved), whatever its spelling.
    timezone: canonicalTimeZone(body.timezone) ?? body.timezone.trim(),
    policy: body.policy ?? before.policy,
    account,
    rows: rows.length ? rows : [emptyRow()],
    windowTimezone: body.window_timezone ?? before.windowTimezone,
    maxAttempts: body.max_attempts ?? before.maxAttempts,
    retryOn: list(body.retry_on),
    retryWaits: body.retry_waits_minutes ?? before.retryWaits,
    voicemail: body.voicemail ?? before.voicemail,
    voicemailMessage: body.voicemail_message ?? before.voicemailMessage,
    consentRequired: body.consent_required ?? before.consentRequired,
    ...handoffValuesOfForm(body, before),
  };
}

/**
 * What the form asks of createAgent or updateAgent, in callctl's terms: every field (no phone: none; no ticked
 * outcome: none; `allowPrivateTargets`: development's WEBHOOK_ALLOW_PRIVATE_TARGETS, for the hand-off's addresses). A field a form without it leaves out keeps the agent's value, or a new agent's default.
 */
export function agentInput(
  body: AgentForm,
  rows: WindowRow[],
  now: Date,
  country: PhoneCountry,
  allowPrivateTargets: boolean,
): AgentInput & { name: string; now: Date } {
  const phone = parseTypedNumber(body.phone, country.code);
  return {
    name: body.name,
    // The number as stored, in E.164 (fieldProblems refused one that does not read); empty: none.
    phone: 'e164' in phone ? phone.e164 : null,
    timezone: body.timezone.trim(),
    windows: rows.filter((row) => !isEmptyRow(row)).map(windowText),
    outsideWindow: body.policy,
    windowTimezone: body.window_timezone,
    maxAttempts: body.max_attempts,
    retryOn: list(body.retry_on),
    retryWaits: body.retry_waits_minutes,
    voicemail: body.voicemail,
    voicemailMessage: body.voicemail_message,
    consentRequired: body.consent_required,
    ...handoffInput(body, allowPrivateTargets),
    now,
  };
}
