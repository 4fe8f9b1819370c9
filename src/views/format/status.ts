// Statuses, failure reasons, attempts and event sources in a person's words.
import type {
  AnsweredBy,
  AttemptOutcome,
  CallStatus,
  FailureReason,
  TimezoneSource,
} from '../../../schemas/vocabulary.js';

/** A call's status on the Calls pages. */
export const STATUS_WORDS: Record<CallStatus, string> = {
  initiated: 'Waiting',
  dialing: 'Dialling',
  in_progress: 'In progress',
  completed: 'Completed',
  failed: 'Failed',
};

/** A call's failure reason on the Calls pages. */
export const REASON_WORDS: Record<FailureReason, string> = {
  busy: 'Busy',
  no_answer: 'No answer',
  rejected: 'Rejected',
  provider_error: 'Provider error',
  expired: 'Expired (still waiting when its time ran out)',
  canceled: 'Canceled',
  voicemail: 'Reached voicemail',
  do_not_call: 'On the do-not-call list',
};

/** A failure reason in the Overview's counts ("busy: 2"). */
export const OVERVIEW_REASON_WORDS: Record<FailureReason, string> = {
  busy: 'busy',
  no_answer: 'no answer',
  rejected: 'rejected',
  provider_error: 'provider error',
  expired: 'expired (waited too long)',
  canceled: 'canceled',
  voicemail: 'voicemail',
  do_not_call: 'do-not-call',
};

const SOURCE_WORDS: Record<string, string> = {
  api: 'through the API',
  dispatcher: 'by the service',
  expiry: 'by the service',
  provider: 'reported by the telephony provider',
  operator: 'by an operator',
  dashboard: 'from the dashboard',
};

/** Who moved a call (a call event's source): "by the service", "through the API". */
export function sourceWords(source: string): string {
  return SOURCE_WORDS[source] ?? `by ${source}`;
}

// ---- Cancelling a waiting call ----

/** Where a call's time zone came from, in words. */
export const TIMEZONE_SOURCE_WORDS: Record<TimezoneSource, string> = {
  request: "the callee's, given by the trigger (recipient_timezone)",
  country: "the callee's, from the number's country (it has one time zone)",
  agent: "the agent's",
};

/** Answering-machine detection's verdict, in words. */
export const ANSWERED_BY_WORDS: Record<AnsweredBy, string> = {
  human: 'A person',
  machine: 'A machine (voicemail)',
  unknown: 'Unknown (detection could not tell)',
};

/** How one attempt ended, in words. */
export const ATTEMPT_OUTCOME_WORDS: Record<AttemptOutcome, string> = {
  completed: 'Completed',
  busy: 'Busy',
  no_answer: 'No answer',
  rejected: 'Rejected',
  provider_error: 'Provider error',
  voicemail: 'Reached voicemail',
};
