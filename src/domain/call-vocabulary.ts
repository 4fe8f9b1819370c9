// The call vocabulary, written once: statuses, failure reasons, webhook event types and delivery statuses, as literal
// tuples whose element types are the unions everything else uses (TypeBox schemas, SQL parameters, callctl's checks).
// src/storage/vocabulary.ts ties them to the database's enums at compile time.

export const CALL_STATUSES = ['initiated', 'dialing', 'in_progress', 'completed', 'failed'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Dialling or connected: what the per-account concurrency limit counts. */
export const ACTIVE_STATUSES = ['dialing', 'in_progress'] as const satisfies readonly CallStatus[];
/** Not yet ended: waiting, dialling or connected. */
export const LIVE_STATUSES = ['initiated', 'dialing', 'in_progress'] as const satisfies readonly CallStatus[];
export const TERMINAL_STATUSES = ['completed', 'failed'] as const satisfies readonly CallStatus[];

export const FAILURE_REASONS = ['busy', 'no_answer', 'rejected', 'provider_error', 'expired', 'canceled'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

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
