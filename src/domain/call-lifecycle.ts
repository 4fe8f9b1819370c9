// The call lifecycle as a guarded state machine: initiated -> dialing -> in_progress -> completed, or -> failed from
// any non-terminal status; and, under the agent's retry policy, an attempt that failed back to initiated for the next
// one (same call). Pure: given a call's status and an update, says what changes (or that nothing does).

import {
  ACTIVE_STATUSES,
  ATTEMPT_OUTCOMES,
  MAX_ATTEMPTS,
  RETRYABLE_OUTCOMES,
  TERMINAL_STATUSES,
  isOneOf,
  type AttemptOutcome,
  type CallStatus,
  type FailureReason,
  type RetryableOutcome,
  type WebhookEventType,
} from '../../schemas/vocabulary.js';

export type { AttemptOutcome, CallStatus, FailureReason, WebhookEventType };

/** What happened to a call, from the dispatcher, a provider or the expiry sweep. */
export type CallUpdate =
  | { kind: 'dialing' }
  | { kind: 'answered' }
  | { kind: 'completed'; durationSeconds?: number }
  | { kind: 'failed'; reason: FailureReason };

const ORDER: Record<CallStatus, number> = { initiated: 0, dialing: 1, in_progress: 2, completed: 3, failed: 3 };
export const TERMINAL: ReadonlySet<CallStatus> = new Set(TERMINAL_STATUSES);
export const ACTIVE: ReadonlySet<CallStatus> = new Set(ACTIVE_STATUSES);

export interface Transition {
  from: CallStatus;
  to: CallStatus;
  /** Why the call failed; on a retry (to initiated), why the attempt that just ended failed. */
  failureReason: FailureReason | null;
  /** The webhook event this transition produces, if any (none for a retry: the call goes on). */
  event: WebhookEventType | null;
  /** How the attempt being dialled ended, when this step ends one (from dialing or in_progress); otherwise null. */
  attemptOutcome: AttemptOutcome | null;
}

/** An agent's retry policy as stored (agents.max_attempts, retry_on, retry_waits_minutes), checked. */
export interface RetryPolicy {
  /** Attempts in all, 1 to MAX_ATTEMPTS (1: no retry). */
  maxAttempts: number;
  retryOn: readonly RetryableOutcome[];
  /** Minutes before attempt 2, 3, ...; the last repeats. Never empty. */
  waitsMinutes: readonly number[];
}

/** The longest wait between attempts the stored policy may name (a year): beyond it the policy is unreadable. */
export const MAX_RETRY_WAIT_MINUTES = 525_600;

export class RetryPolicyError extends Error {
  override name = 'RetryPolicyError';
}

/**
 * The retry policy of an agent's stored columns, or a RetryPolicyError naming what does not hold. The settings forms
 * have their own (stricter) rules; this one guards what the database holds, so that a hand-edited row never retries
 * on nonsense: 0 minutes is allowed (at once), `rejected` never is.
 */
export function retryPolicySchemaCheck(stored: {
  maxAttempts: unknown;
  retryOn: unknown;
  waitsMinutes: unknown;
}): RetryPolicy {
  const { maxAttempts, retryOn, waitsMinutes } = stored;
  if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1 || (maxAttempts as number) > MAX_ATTEMPTS)
    throw new RetryPolicyError(`max_attempts must be an integer from 1 to ${MAX_ATTEMPTS}`);
  if (!Array.isArray(retryOn) || !retryOn.every((o) => typeof o === 'string' && isOneOf(RETRYABLE_OUTCOMES, o)))
    throw new RetryPolicyError(`retry_on must be a list of ${RETRYABLE_OUTCOMES.join(', ')}`);
  if (
    !Array.isArray(waitsMinutes) ||
    waitsMinutes.length === 0 ||
    !waitsMinutes.every((m) => Number.isInteger(m) && (m as number) >= 0 && (m as number) <= MAX_RETRY_WAIT_MINUTES)
  )
    throw new RetryPolicyError(
      `retry_waits_minutes must be a non-empty list of whole minutes up to ${MAX_RETRY_WAIT_MINUTES}`,
    );
  return {
    maxAttempts: maxAttempts as number,
    retryOn,
    waitsMinutes: waitsMinutes as number[],
  };
}

/** Minutes to wait after attempt `attempt` failed before the next one: the policy's wait for it, the last repeating. */
export function retryWaitMinutes(policy: Pick<RetryPolicy, 'waitsMinutes'>, attempt: number): number {
  const { waitsMinutes } = policy;
  return waitsMinutes[Math.min(attempt, waitsMinutes.length) - 1]!;
}

/**
 * The outcome recorded for a dialled attempt that failed with `reason`. Reasons that are not an attempt's (a
 * provider's own `canceled`, say) count as the provider's error.
 */
export function attemptOutcomeOf(reason: FailureReason): AttemptOutcome {
  return isOneOf(ATTEMPT_OUTCOMES, reason) ? reason : 'provider_error';
}

/** Where the call is in its attempts and what its agent's policy allows (null: unreadable or unknown, no retry). */
export interface AttemptContext {
  attempt: number;
  policy: RetryPolicy | null;
}

const EVENT_OF: Partial<Record<CallStatus, WebhookEventType>> = {
  dialing: 'call.started',
  completed: 'call.completed',
  failed: 'call.failed',
};

function targetOf(update: CallUpdate): CallStatus {
  switch (update.kind) {
    case 'dialing':
      return 'dialing';
    case 'answered':
      return 'in_progress';
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
  }
}

/** Whether an attempt that ended with `outcome` is dialled again: the policy retries it and attempts are left. */
export function retries(outcome: AttemptOutcome, attempts: AttemptContext | undefined): boolean {
  const policy = attempts?.policy;
  if (!policy || attempts.attempt >= Math.min(policy.maxAttempts, MAX_ATTEMPTS)) return false;
  // Never `rejected` (the callee declined), whatever the stored list says: the check above already refuses it.
  return isOneOf(RETRYABLE_OUTCOMES, outcome) && policy.retryOn.includes(outcome);
}

/**
 * The transitions that take `status` to the update's target, in order, or [] when the update changes nothing:
 * a duplicate, an out-of-order (older) update, or anything after a terminal status. A completion reported while
 * still dialing (the "answered" update was lost) passes through in_progress, so every step is recorded. A failure
 * of a dialled attempt (from dialing or in_progress) that `attempts`' policy retries is one step back to initiated,
 * without an event: the call waits for its next attempt.
 */
export function plan(status: CallStatus, update: CallUpdate, attempts?: AttemptContext): Transition[] {
  if (TERMINAL.has(status)) return [];
  const to = targetOf(update);
  if (to === 'failed') {
    const reason = (update as { reason: FailureReason }).reason;
    const attemptOutcome = ACTIVE.has(status) ? attemptOutcomeOf(reason) : null;
    if (attemptOutcome && retries(attemptOutcome, attempts))
      return [{ from: status, to: 'initiated', failureReason: reason, event: null, attemptOutcome }];
    return [{ from: status, to, failureReason: reason, event: 'call.failed', attemptOutcome }];
  }
  if (ORDER[to] <= ORDER[status]) return [];
  // A call cannot be answered or completed before it was dialled.
  if (status === 'initiated' && to !== 'dialing') return [];
  const steps: Transition[] = [];
  let current = status;
  for (const next of ['dialing', 'in_progress', 'completed'] as const) {
    if (ORDER[next] <= ORDER[current] || ORDER[next] > ORDER[to]) continue;
    steps.push({
      from: current,
      to: next,
      failureReason: null,
      event: EVENT_OF[next] ?? null,
      attemptOutcome: next === 'completed' ? 'completed' : null,
    });
    current = next;
  }
  return steps;
}

export function isTerminal(status: CallStatus): boolean {
  return TERMINAL.has(status);
}
