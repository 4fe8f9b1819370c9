// An agent's retry policy and voicemail message as people write them (callctl's flags, the dashboard's fields): each
// read into its stored value, or refused with words that fit both, and the rules that tie the settings together.
import { retryWaitMinutes } from './call-lifecycle.js';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX, VOICEMAIL_NAME_PLACEHOLDER } from '../../schemas/agent-settings.js';
import {
  MAX_ATTEMPTS,
  RETRYABLE_OUTCOMES,
  VOICEMAIL_MESSAGE_MAX,
  type RetryableOutcome,
  type VoicemailPolicy,
  type WindowTimezone,
} from '../../schemas/vocabulary.js';

export class AgentSettingError extends Error {
  override name = 'AgentSettingError';
}

const WHOLE = /^[1-9]\d*$/;

/** "Try up to N times": a whole number from 1 to MAX_ATTEMPTS (blanks around it are dropped). */
export function parseMaxAttempts(value: string | number): number {
  const text = String(value).trim();
  const n = Number(text);
  if (!WHOLE.test(text) || n > MAX_ATTEMPTS)
    throw new AgentSettingError(`Attempts must be a whole number from 1 to ${MAX_ATTEMPTS}, not "${String(value)}"`);
  return n;
}

/** "Consent required" (the trigger must carry `consent`): on or off, as callctl's flag and the form's choice say it. */
export function parseConsentRequired(value: string | boolean): boolean {
  if (typeof value === 'boolean' || value === 'on' || value === 'off') return value === true || value === 'on';
  throw new AgentSettingError(`--consent-required must be on or off, not "${value}"`);
}

const OUTCOME_LIST = `${RETRYABLE_OUTCOMES.slice(0, -1).join(', ')} or ${RETRYABLE_OUTCOMES.at(-1)}`;

/**
 * The outcomes that are dialled again: a list, or one text of comma-separated outcomes ("busy,no_answer"; "none" or
 * nothing: none). In the vocabulary's order, each once. A callee who rejected the call is never called again.
 */
export function parseRetryOn(value: string | readonly string[]): RetryableOutcome[] {
  const items =
    typeof value === 'string'
      ? ['', 'none'].includes(value.trim())
        ? []
        : value.split(',')
      : value.filter((item) => item.trim() !== '');
  const chosen = new Set<string>();
  for (const raw of items) {
    const item = raw.trim();
    if (item === 'rejected')
      throw new AgentSettingError(`A call the callee rejected is never retried: retry on ${OUTCOME_LIST}`);
    if (!(RETRYABLE_OUTCOMES as readonly string[]).includes(item))
      throw new AgentSettingError(`Retry on ${OUTCOME_LIST} (comma-separated, or none), not "${raw}"`);
    chosen.add(item);
  }
  return RETRYABLE_OUTCOMES.filter((outcome) => chosen.has(outcome));
}

const WAITS_RULE =
  `1 to ${RETRY_WAITS_MAX} whole numbers of minutes, each from 1 to ${RETRY_WAIT_MAX_MINUTES} (7 days), separated by ` +
  'commas, e.g. 30, 120, 1440';

/**
 * The waits before attempt 2, 3, ... in minutes: a list, or one text of numbers separated by commas or blanks
 * ("30, 120, 1440"). The last repeats for the attempts after it.
 */
export function parseRetryWaits(value: string | readonly number[]): number[] {
  const text = typeof value === 'string' ? value.trim() : null;
  const items = text === null ? (value as readonly number[]).map(String) : text ? text.split(/\s*,\s*|\s+/) : [];
  if (items.length === 0) throw new AgentSettingError(`Waits between attempts: give ${WAITS_RULE}`);
  for (const item of items) {
    if (!WHOLE.test(item) || Number(item) > RETRY_WAIT_MAX_MINUTES)
      throw new AgentSettingError(`Waits between attempts must be ${WAITS_RULE}; "${item}" is not one`);
  }
  if (items.length > RETRY_WAITS_MAX)
    throw new AgentSettingError(
      `Waits between attempts: at most ${RETRY_WAITS_MAX} (the last one repeats), not ${items.length}`,
    );
  return items.map(Number);
}

/** A message as stored: line breaks as LF (a form sends CRLF), blanks around it dropped; nothing left is none. */
export function normalizeVoicemailMessage(message: string): string | null {
  const text = message.replace(/\r\n?/g, '\n').trim();
  return text === '' ? null : text;
}

/** Control characters (C0, DEL, C1) and UTF-16 halves without their partner; line feeds are taken out first. */
const UNSAYABLE = /[\p{Cc}\p{Cs}]/u;
const PLACEHOLDER = /\{\{[^{}]*\}\}/g;
/** The name placeholder as the message is spoken (src/domain/voicemail.ts): blanks inside the braces are tolerated. */
const NAME_PLACEHOLDER = /^\{\{\s*name\s*\}\}$/;

const characters = (text: string) => [...text].length;

/** What is wrong with a voicemail message (as normalizeVoicemailMessage stores it), or null. */
export function voicemailMessageProblem(message: string): string | null {
  const length = characters(message);
  if (length > VOICEMAIL_MESSAGE_MAX)
    return `The voicemail message has at most ${VOICEMAIL_MESSAGE_MAX} characters (a line break counts as one); this one has ${length}`;
  if (UNSAYABLE.test(message.replaceAll('\n', '')))
    return 'The voicemail message must not contain control characters (tabs included) other than line breaks';
  const other = message.match(PLACEHOLDER)?.find((p) => !NAME_PLACEHOLDER.test(p));
  if (other !== undefined)
    return `The voicemail message can use ${VOICEMAIL_NAME_PLACEHOLDER} (the trigger's name) and no other placeholder, not "${other}"`;
  return null;
}

/** The settings that must agree with each other. */
export interface ReachSettings {
  maxAttempts: number;
  retryOn: readonly string[];
  voicemail: VoicemailPolicy;
  voicemailMessage: string | null;
  /** Whether the agent has a calling window (none: always open). */
  hasWindow: boolean;
  outsideWindow: 'queue' | 'reject';
  windowTimezone: WindowTimezone;
}

/**
 * The setting a contradiction is put on (the one to change), by the name callctl and the form share; and the two
 * settings it ties (src/admin/agents.ts checks a contradiction only when one of them is given, so that settings
 * stored before a rule do not block an edit of other fields).
 */
export const CONFLICTS = {
  /** More than one attempt and nothing to retry on: the attempts could never be made. */
  attempts_without_outcome: { field: 'retry_on', ties: ['maxAttempts', 'retryOn'] },
  /** An outcome to retry on with one attempt: there is no second attempt to make. */
  outcome_with_one_attempt: { field: 'retry_on', ties: ['maxAttempts', 'retryOn'] },
  /** Retrying on voicemail without detecting one: no call ever ends on voicemail. */
  voicemail_retry_without_detection: { field: 'voicemail', ties: ['retryOn', 'voicemail'] },
  /** Leaving a message without one to leave. */
  message_missing: { field: 'voicemail_message', ties: ['voicemail', 'voicemailMessage'] },
  /** A message with voicemail other than leave_message: it would never be said. */
  message_without_leave: { field: 'voicemail_message', ties: ['voicemail', 'voicemailMessage'] },
  /** Rejecting triggers outside the window without a window: an agent without one is always open. */
  reject_without_window: { field: 'outside_window', ties: ['windows', 'outsideWindow'] },
  /** Reading the window in the callee's zone without a window: there are no hours to read. */
  recipient_without_window: { field: 'window_timezone', ties: ['windows', 'windowTimezone'] },
} as const;
export type ConflictCode = keyof typeof CONFLICTS;

const CONFLICT_WORDS: Record<ConflictCode, (s: ReachSettings) => string> = {
  attempts_without_outcome: (s) =>
    `Trying up to ${s.maxAttempts} times needs at least one outcome to retry on: ${OUTCOME_LIST} (or try once)`,
  outcome_with_one_attempt: (s) =>
    `Retrying on ${s.retryOn.join(', ')} needs more than one attempt: try up to 2 or more times (or retry on none)`,
  voicemail_retry_without_detection: () =>
    'Retrying on voicemail needs voicemail detection: hang up or leave a message when a machine answers',
  message_missing: () => 'Leaving a message when a machine answers needs the message to leave',
  message_without_leave: () =>
    'A voicemail message is only left when a machine answers and the agent leaves a message: remove the message ' +
    '(or leave it, with voicemail leave_message)',
  reject_without_window: () =>
    'Rejecting triggers outside the calling window needs a calling window: without one the agent is always open ' +
    '(add a window, or queue)',
  recipient_without_window: () =>
    "Reading the calling window in the callee's time zone needs a calling window: without one the agent is always " +
    "open (add a window, or read it in the agent's time zone)",
};

/**
 * The settings that contradict each other (a setting that could never take effect), each once, in a fixed order.
 * The retry waits are no part of it: they always have a value (the defaults), unused with one attempt and kept for
 * when the attempts are raised.
 */
export function settingConflicts(s: ReachSettings): { code: ConflictCode; message: string }[] {
  const found: ConflictCode[] = [];
  if (s.maxAttempts > 1 && s.retryOn.length === 0) found.push('attempts_without_outcome');
  if (s.maxAttempts <= 1 && s.retryOn.length > 0) found.push('outcome_with_one_attempt');
  if (s.retryOn.includes('voicemail') && s.voicemail === 'off') found.push('voicemail_retry_without_detection');
  if (s.voicemail === 'leave_message' && s.voicemailMessage === null) found.push('message_missing');
  if (s.voicemail !== 'leave_message' && s.voicemailMessage !== null) found.push('message_without_leave');
  if (!s.hasWindow && s.outsideWindow === 'reject') found.push('reject_without_window');
  if (!s.hasWindow && s.windowTimezone === 'recipient') found.push('recipient_without_window');
  return found.map((code) => ({ code, message: CONFLICT_WORDS[code](s) }));
}

/** The first contradiction's words, or null. */
export function reachSettingsProblem(settings: ReachSettings): string | null {
  return settingConflicts(settings)[0]?.message ?? null;
}

/** A setting as a change names it (src/admin/agents.ts AgentInput's keys). */
export type SettingKey = (typeof CONFLICTS)[ConflictCode]['ties'][number];

/**
 * The contradictions a change is answerable for: those that tie a setting it gives (`all`: both settings, the check
 * callctl makes before it reads the agent). A contradiction between two settings it leaves alone was stored before
 * the rule, and does not block an edit of other fields.
 */
export function conflictsOfChange(s: ReachSettings, given: ReadonlySet<string>, all = false) {
  return settingConflicts(s).filter(({ code }) =>
    all ? CONFLICTS[code].ties.every((key) => given.has(key)) : CONFLICTS[code].ties.some((key) => given.has(key)),
  );
}

/**
 * The settings after a change that gives `given`, where a setting it leaves alone could no longer take effect: that
 * one returns to its neutral value (the default) rather than refusing the change. One attempt: nothing to retry on;
 * voicemail other than leave_message: no message; no window: queue, in the agent's time zone. A setting given that
 * cannot apply is refused instead (conflictsOfChange).
 */
export function settledSettings(s: ReachSettings, given: ReadonlySet<string>): ReachSettings {
  const left = (key: SettingKey) => !given.has(key);
  return {
    ...s,
    retryOn: given.has('maxAttempts') && left('retryOn') && s.maxAttempts <= 1 ? [] : s.retryOn,
    voicemailMessage:
      given.has('voicemail') && left('voicemailMessage') && s.voicemail !== 'leave_message' ? null : s.voicemailMessage,
    outsideWindow: given.has('windows') && left('outsideWindow') && !s.hasWindow ? 'queue' : s.outsideWindow,
    windowTimezone: given.has('windows') && left('windowTimezone') && !s.hasWindow ? 'agent' : s.windowTimezone,
  };
}

/** The wait before each attempt after the first, for `maxAttempts` attempts (the last listed wait repeats). */
export function waitsBetween(maxAttempts: number, waits: readonly number[]): number[] {
  if (waits.length === 0) return [];
  return Array.from({ length: Math.max(maxAttempts - 1, 0) }, (_, i) =>
    retryWaitMinutes({ waitsMinutes: waits }, i + 1),
  );
}
