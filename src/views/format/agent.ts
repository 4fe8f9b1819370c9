// An agent's retry policy, voicemail setting, calling-hours zone and consent setting in a person's words, for the
// Agents list and the agent's page ("Up to 3 attempts, retried when busy or no answer, after 30 min, then 2 h").
import type { RetryableOutcome, VoicemailPolicy, WindowTimezone } from '../../../schemas/vocabulary.js';
import { RETRYABLE_OUTCOMES } from '../../../schemas/vocabulary.js';
import { waitsBetween } from '../../domain/agent-settings.js';

/** An outcome as the form's boxes say it. */
export const OUTCOME_WORDS: Record<RetryableOutcome, string> = {
  busy: 'busy',
  no_answer: 'no answer',
  voicemail: 'voicemail',
};

/** The form's choices of what to do when a machine answers. */
export const VOICEMAIL_WORDS: Record<VoicemailPolicy, string> = {
  off: 'Do nothing (no detection)',
  hang_up: 'Hang up',
  leave_message: 'Leave a message',
};

/** The settings as stored (the JSON columns as read). */
export interface AgentReach {
  timezone: string;
  windowTimezone: WindowTimezone;
  maxAttempts: number;
  retryOn: unknown;
  retryWaitsMinutes: unknown;
  voicemail: VoicemailPolicy;
  voicemailMessage: string | null;
  /** Triggers for the agent must carry `consent`. */
  consentRequired: boolean;
}

/** The stored outcomes that are retryable, in the vocabulary's order (anything else stored by hand is left out). */
export function retryOutcomes(stored: unknown): RetryableOutcome[] {
  const list: unknown[] = Array.isArray(stored) ? stored : [];
  return RETRYABLE_OUTCOMES.filter((outcome) => list.includes(outcome));
}

/** The stored waits, whole minutes above zero (anything else stored by hand is left out). */
export function retryWaits(stored: unknown): number[] {
  const list: unknown[] = Array.isArray(stored) ? stored : [];
  return list.filter((m): m is number => Number.isInteger(m) && (m as number) > 0);
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** `45 min`, `2 h`, `1 h 30 min`, `1 day`, `2 days 3 h`. */
export function minutesWords(minutes: number): string {
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  const parts = [days ? plural(days, 'day') : '', hours ? `${hours} h` : '', rest ? `${rest} min` : ''];
  return parts.filter(Boolean).join(' ') || '0 min';
}

/** "a", "a or b", "a, b or c". */
function orList(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** "One attempt (no retry)", or "Up to 3 attempts, retried when busy or no answer, after 30 min, then 2 h". */
export function attemptsWords(agent: Pick<AgentReach, 'maxAttempts' | 'retryOn' | 'retryWaitsMinutes'>): string {
  const outcomes = retryOutcomes(agent.retryOn);
  if (agent.maxAttempts <= 1 || outcomes.length === 0) return 'One attempt (no retry)';
  const waits = waitsBetween(agent.maxAttempts, retryWaits(agent.retryWaitsMinutes)).map(minutesWords);
  const after = waits.length ? `, after ${waits.join(', then ')}` : '';
  return `Up to ${agent.maxAttempts} attempts, retried when ${orList(outcomes.map((o) => OUTCOME_WORDS[o]))}${after}`;
}

/** At most `max` characters of a message, with an ellipsis when cut (the list's cells stay short). */
function shortened(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** "Do nothing (no detection)", "Hang up", or "Leave a message: “…”" (`max`: cut the message to that length). */
export function voicemailWords(agent: Pick<AgentReach, 'voicemail' | 'voicemailMessage'>, max = Infinity): string {
  if (agent.voicemail !== 'leave_message') return VOICEMAIL_WORDS[agent.voicemail];
  const message = agent.voicemailMessage ?? '';
  return `${VOICEMAIL_WORDS.leave_message}: “${Number.isFinite(max) ? shortened(message, max) : message}”`;
}

/** Whose time the calling windows are read in. */
export function windowTimezoneWords(agent: Pick<AgentReach, 'windowTimezone' | 'timezone'>): string {
  return agent.windowTimezone === 'recipient'
    ? `The callee's time zone (from the trigger or their number; else ${agent.timezone})`
    : `The agent's time zone (${agent.timezone})`;
}

/** Whether a trigger must carry the callee's consent. */
export function consentWords(agent: Pick<AgentReach, 'consentRequired'>): string {
  return agent.consentRequired
    ? 'Required: a trigger without consent is refused (400 "Consent is required for this agent")'
    : "Not required by the agent (the agency's calling rules may require it)";
}

/** The agent's page: each setting in words. */
export function reachSummary(agent: AgentReach): { label: string; words: string }[] {
  return [
    { label: 'Attempts', words: attemptsWords(agent) },
    { label: 'When a machine answers', words: voicemailWords(agent) },
    { label: 'Calling hours in', words: windowTimezoneWords(agent) },
    { label: 'Consent on record', words: consentWords(agent) },
  ];
}
