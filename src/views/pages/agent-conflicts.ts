// The agent form's settings that contradict each other (src/domain/agent-settings.ts settingConflicts: one attempt
// with an outcome to retry on, a voicemail message without "Leave a message", "Reject" or the callee's hours without
// a calling window, ...), each in plain words on the field to change. The same rules as src/admin/agents.ts.
import type { AgentForm } from '../../../schemas/dashboard/agents.js';
import type { WindowTimezone } from '../../../schemas/vocabulary.js';
import {
  CONFLICTS,
  normalizeVoicemailMessage,
  settingConflicts,
  type ConflictCode,
  type ReachSettings,
} from '../../domain/agent-settings.js';

/** A contradiction in the form's words, given the attempts as chosen. */
const WORDS: Record<ConflictCode, (s: ReachSettings) => string> = {
  attempts_without_outcome: (s) =>
    `Trying up to ${s.maxAttempts} times needs a reason to try again: tick busy, no answer or voicemail (or try once).`,
  outcome_with_one_attempt: () =>
    'With one attempt there is nothing to retry: choose 2 or more attempts in all, or untick these.',
  voicemail_retry_without_detection: () =>
    'Retrying on voicemail needs a machine to be detected: choose "Hang up" or "Leave a message" (or untick voicemail).',
  message_missing: () => 'Write the message to leave on a machine, or choose another answer above.',
  message_without_leave: () =>
    'A message is left only when "Leave a message" is chosen above: choose it, or clear the message.',
  reject_without_window: () =>
    'Without a calling window the agent is always open, so no trigger is ever outside it: add a window above, or ' +
    'choose Queue.',
  recipient_without_window: () =>
    "Without a calling window there are no hours to read in anyone's time zone: add a window above, or choose the " +
    "agent's time zone.",
};

/** The form's field a domain setting is, by its id in the page. */
const FIELD_ID: Record<string, string> = {
  maxAttempts: 'max_attempts',
  retryOn: 'retry_on',
  voicemail: 'voicemail',
  voicemailMessage: 'voicemail_message',
  outsideWindow: 'policy',
  windowTimezone: 'window_timezone',
  outside_window: 'policy',
};

const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * The contradictions of what the form sent, by field id: each on its field, unless that field, or one of the two it
 * ties, already has a problem of its own (a value that does not read says more). A field the form left out (one its
 * script disabled as not applying) counts as its neutral value: the save returns it to that value.
 */
export function conflictProblems(
  body: AgentForm,
  hasWindow: boolean,
  errors: Readonly<Record<string, string>>,
): Record<string, string> {
  const settings: ReachSettings = {
    maxAttempts: Number((body.max_attempts ?? '1').trim()) || 1,
    retryOn: list(body.retry_on).filter((o) => o.trim() !== ''),
    voicemail: body.voicemail ?? 'off',
    voicemailMessage: normalizeVoicemailMessage(body.voicemail_message ?? ''),
    hasWindow,
    outsideWindow: body.policy ?? 'queue',
    windowTimezone: body.window_timezone ?? ('agent' satisfies WindowTimezone),
  };
  const found: Record<string, string> = {};
  for (const { code } of settingConflicts(settings)) {
    const { field, ties } = CONFLICTS[code];
    const id = FIELD_ID[field] ?? field;
    const tied = ties.map((key) => FIELD_ID[key]).filter((f): f is string => f !== undefined);
    if (errors[id] || found[id] || tied.some((f) => errors[f])) continue;
    found[id] = WORDS[code](settings);
  }
  return found;
}
