// What is wrong with each field of the agent form, in words, by the field's id (name, phone, w0-days, ...).
import type { AgentForm } from '../../../schemas/dashboard/agents.js';
import { readableNameProblem } from '../../../schemas/text.js';
import { AGENT_NAME_MAX_LENGTH } from '../../admin/agents.js';
import {
  AgentSettingError,
  normalizeVoicemailMessage,
  parseMaxAttempts,
  parseRetryOn,
  parseRetryWaits,
  voicemailMessageProblem,
} from '../../domain/agent-settings.js';
import { phoneProblem, type PhoneCountry } from './agent-caller-id.js';
import { conflictProblems } from './agent-conflicts.js';
import { canonicalTimeZone } from '../../domain/time-zones.js';
import { isEmptyRow, list, type FieldErrors, type WindowRow } from './agent-form-values.js';
import { handoffProblems } from './agent-form-handoff.js';

const TIME = /^(?:[01]\d|2[0-3]):[0-5]\d$/;

/** The problems of one window row, by field id; none for an empty row (it is not a window). */
function rowProblems(row: WindowRow, i: number): FieldErrors {
  if (isEmptyRow(row)) return {};
  const errors: FieldErrors = {};
  if (row.days.length === 0) errors[`w${i}-days`] = 'Tick at least one day on which this window is open.';
  if (!row.from) errors[`w${i}-from`] = 'Enter the time this window opens, such as 09:00.';
  else if (!TIME.test(row.from)) errors[`w${i}-from`] = 'Enter the opening time as hours and minutes, such as 09:00.';
  if (!row.to) errors[`w${i}-to`] = 'Enter the time this window closes, such as 17:00.';
  else if (!TIME.test(row.to) && row.to !== '24:00')
    errors[`w${i}-to`] = 'Enter the closing time as hours and minutes, such as 17:00.';
  else if (row.from === row.to && row.to !== '00:00')
    errors[`w${i}-to`] = 'This window would close the moment it opens: choose another closing time.';
  return errors;
}

/** The setting's problem as the domain words it, or null. */
function settingProblem(read: () => unknown): string | null {
  try {
    read();
    return null;
  } catch (error) {
    if (error instanceof AgentSettingError) return `${error.message}.`;
    throw error;
  }
}

/**
 * Every problem of the form, each next to its field, in plain words: the name, the number, the zone, each window
 * row's days and times, the retry settings, the message, the hand-off (with `allowPrivateTargets`, development's
 * WEBHOOK_ALLOW_PRIVATE_TARGETS, its addresses may be local), and the settings that contradict each other (each put on
 * the field to change). The same rules as src/admin/agents.ts, which checks again on save.
 */
export function fieldProblems(
  body: AgentForm,
  rows: WindowRow[],
  country: PhoneCountry,
  allowPrivateTargets: boolean,
): FieldErrors {
  const errors: FieldErrors = {};
  const name = body.name.trim();
  const nameProblem = readableNameProblem(name);
  if (!name) errors.name = 'Give the agent a name.';
  else if (name.length > AGENT_NAME_MAX_LENGTH)
    errors.name = `The name is too long: at most ${AGENT_NAME_MAX_LENGTH} characters.`;
  else if (nameProblem) errors.name = `The name ${nameProblem}.`;
  const phone = phoneProblem(body.phone, country);
  if (phone) errors.phone = phone;
  if (canonicalTimeZone(body.timezone) === null) errors.timezone = 'Choose a time zone from the list.';
  rows.forEach((row, i) => Object.assign(errors, rowProblems(row, i)));

  const attempts = body.max_attempts ?? '1';
  const attemptsProblem = settingProblem(() => parseMaxAttempts(attempts));
  if (attemptsProblem) errors.max_attempts = attemptsProblem;
  const outcomes = list(body.retry_on);
  const outcomesProblem = settingProblem(() => parseRetryOn(outcomes));
  if (outcomesProblem) errors.retry_on = outcomesProblem;
  if (body.retry_waits_minutes !== undefined) {
    const waits = body.retry_waits_minutes;
    const waitsProblem = settingProblem(() => parseRetryWaits(waits));
    if (waitsProblem) errors.retry_waits_minutes = waitsProblem;
  }
  const message = normalizeVoicemailMessage(body.voicemail_message ?? '');
  const messageProblem = message === null ? null : voicemailMessageProblem(message);
  if (messageProblem) errors.voicemail_message = `${messageProblem}.`;
  Object.assign(errors, handoffProblems(body, allowPrivateTargets));

  // The settings that must agree (agent-conflicts.ts), each on the field to change.
  Object.assign(
    errors,
    conflictProblems(
      body,
      rows.some((row) => !isEmptyRow(row)),
      errors,
    ),
  );
  return errors;
}
