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
}

/** What makes the settings contradict each other (a setting that could never take effect), or null. */
export function reachSettingsProblem(settings: ReachSettings): string | null {
  if (settings.maxAttempts > 1 && settings.retryOn.length === 0)
    return `Trying up to ${settings.maxAttempts} times needs at least one outcome to retry on: ${OUTCOME_LIST} (or try once)`;
  if (settings.retryOn.includes('voicemail') && settings.voicemail === 'off')
    return 'Retrying on voicemail needs voicemail detection: hang up or leave a message when a machine answers';
  if (settings.voicemail === 'leave_message' && settings.voicemailMessage === null)
    return 'Leaving a message when a machine answers needs the message to leave';
  return null;
}

/** The wait before each attempt after the first, for `maxAttempts` attempts (the last listed wait repeats). */
export function waitsBetween(maxAttempts: number, waits: readonly number[]): number[] {
  if (waits.length === 0) return [];
  return Array.from({ length: Math.max(maxAttempts - 1, 0) }, (_, i) =>
    retryWaitMinutes({ waitsMinutes: waits }, i + 1),
  );
}
