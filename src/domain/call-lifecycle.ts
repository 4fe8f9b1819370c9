// The call lifecycle as a guarded state machine: initiated -> dialing -> in_progress -> completed, or -> failed from
// any non-terminal status. Pure: given a call's status and an update, says what changes (or that nothing does).

import {
  ACTIVE_STATUSES,
  TERMINAL_STATUSES,
  type CallStatus,
  type FailureReason,
  type WebhookEventType,
} from './call-vocabulary.js';

export type { CallStatus, FailureReason, WebhookEventType };

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
  failureReason: FailureReason | null;
  /** The webhook event this transition produces, if any. */
  event: WebhookEventType | null;
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

/**
 * The transitions that take `status` to the update's target, in order, or [] when the update changes nothing:
 * a duplicate, an out-of-order (older) update, or anything after a terminal status. A completion reported while
 * still dialing (the "answered" update was lost) passes through in_progress, so every step is recorded.
 */
export function plan(status: CallStatus, update: CallUpdate): Transition[] {
  if (TERMINAL.has(status)) return [];
  const to = targetOf(update);
  if (to === 'failed') {
    return [{ from: status, to, failureReason: (update as { reason: FailureReason }).reason, event: 'call.failed' }];
  }
  if (ORDER[to] <= ORDER[status]) return [];
  // A call cannot be answered or completed before it was dialled.
  if (status === 'initiated' && to !== 'dialing') return [];
  const steps: Transition[] = [];
  let current = status;
  for (const next of ['dialing', 'in_progress', 'completed'] as const) {
    if (ORDER[next] <= ORDER[current] || ORDER[next] > ORDER[to]) continue;
    steps.push({ from: current, to: next, failureReason: null, event: EVENT_OF[next] ?? null });
    current = next;
  }
  return steps;
}

export function isTerminal(status: CallStatus): boolean {
  return TERMINAL.has(status);
}
