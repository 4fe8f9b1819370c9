// The call vocabulary, written once: statuses, failure reasons, webhook event types and delivery statuses, as literal
// tuples whose element types are the unions everything else uses (TypeBox schemas, SQL parameters, callctl's checks).
// A leaf (it imports nothing): schemas/ and src/ both read it. src/storage/vocabulary.ts ties it to the database's
// enums at compile time.

export const CALL_STATUSES = ['initiated', 'dialing', 'in_progress', 'completed', 'failed'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Dialling or connected: what the per-account concurrency limit counts. */
export const ACTIVE_STATUSES = ['dialing', 'in_progress'] as const satisfies readonly CallStatus[];
/** Not yet ended: waiting, dialling or connected. */
export const LIVE_STATUSES = ['initiated', 'dialing', 'in_progress'] as const satisfies readonly CallStatus[];
export const TERMINAL_STATUSES = ['completed', 'failed'] as const satisfies readonly CallStatus[];

export const FAILURE_REASONS = [
  'busy',
  'no_answer',
  'rejected',
  'provider_error',
  'expired',
  'canceled',
  'voicemail',
  'do_not_call',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** How one dialled attempt ended: completed, or the reason it failed. */
export const ATTEMPT_OUTCOMES = ['completed', 'busy', 'no_answer', 'rejected', 'provider_error', 'voicemail'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
/** The outcomes an agent's retry policy may dial again (never `rejected`: the callee declined). */
export const RETRYABLE_OUTCOMES = ['busy', 'no_answer', 'voicemail'] as const satisfies readonly AttemptOutcome[];
export type RetryableOutcome = (typeof RETRYABLE_OUTCOMES)[number];
export const MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_WAITS_MINUTES = [30, 120, 1440] as const;

/** Answering-machine detection's verdict. */
export const ANSWERED_BY = ['human', 'machine', 'unknown'] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];
/** What an agent does on reaching a machine. */
export const VOICEMAIL_POLICIES = ['off', 'hang_up', 'leave_message'] as const;
export type VoicemailPolicy = (typeof VOICEMAIL_POLICIES)[number];
export const VOICEMAIL_MESSAGE_MAX = 500;

/** How an agent's answered calls reach the voice-agent runtime: a media stream, or a SIP destination. */
export const HANDOFF_KINDS = ['stream', 'sip'] as const;
export type HandoffKind = (typeof HANDOFF_KINDS)[number];

/** Whose local time an agent's calling windows are read in. */
export const WINDOW_TIMEZONES = ['agent', 'recipient'] as const;
export type WindowTimezone = (typeof WINDOW_TIMEZONES)[number];
/** Where a call's zone came from: the trigger's recipient_timezone, the number's country, or the agent. */
export const TIMEZONE_SOURCES = ['request', 'country', 'agent'] as const;
export type TimezoneSource = (typeof TIMEZONE_SOURCES)[number];

export const WEBHOOK_EVENT_TYPES = ['call.started', 'call.completed', 'call.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A webhook delivery: pending (to send, or retrying), held (its endpoint is disabled; sent when it is enabled again),
 * succeeded, failed (its attempts ran out; sent again only by a resend).
 */
export const DELIVERY_STATUSES = ['pending', 'held', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** Not sent yet: what the delivery is kept for (retention deletes neither these nor their calls). */
export const UNSENT_DELIVERY_STATUSES = ['pending', 'held'] as const satisfies readonly DeliveryStatus[];

/** Whether `value` is one of `list` (narrowing it), for input read from people or the database. */
export function isOneOf<T extends string>(list: readonly T[], value: unknown): value is T {
  return (list as readonly unknown[]).includes(value);
}
