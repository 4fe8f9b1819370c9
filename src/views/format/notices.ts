// The notices a cancel leaves, and the words for deliveries, endpoints and audit entries.
import { type CallStatus, type FailureReason } from '../../../schemas/vocabulary.js';
import type { ShownTimes } from './shown-times.js';
import { withShownTimes } from './time.js';

/** Why a call cannot be canceled any more, on its detail view (null: it still waits, or it was canceled). */
export function cannotCancelWords(status: CallStatus, reason: FailureReason | null): string | null {
  if (status === 'dialing' || status === 'in_progress')
    return `This call is already ${status === 'dialing' ? 'being dialled' : 'in progress'}: it can no longer be canceled.`;
  if (status === 'completed' || (status === 'failed' && reason !== 'canceled'))
    return 'This call has ended: only a call that is still waiting can be canceled.';
  return null;
}

/** What cancelling one call did (its detail view's notice). */
export function cancelNotice(
  result: 'canceled' | 'already_canceled' | 'too_late' | 'not_found',
  status: CallStatus | null,
): { kind: 'ok' | 'error'; text: string } {
  switch (result) {
    case 'canceled':
      return {
        kind: 'ok',
        text: 'The call is canceled: it will not be dialled. It ended failed (canceled), and call.failed is sent to the webhook.',
      };
    case 'already_canceled':
      return { kind: 'ok', text: 'This call was already canceled.' };
    default:
      return {
        kind: 'error',
        text:
          status === 'dialing' || status === 'in_progress'
            ? 'Not canceled: the call is already being dialled, so it can no longer be canceled.'
            : 'Not canceled: the call has already ended.',
      };
  }
}

const calls = (n: number) => (n === 1 ? '1 call' : `${n} calls`);

/** What "Cancel selected calls" did, on the Calls list. */
export function cancelManyNotice(counts: { canceled: number; already: number; tooLate: number }): {
  kind: 'ok' | 'error';
  text: string;
} {
  const { canceled, already, tooLate } = counts;
  if (canceled + already + tooLate === 0)
    return { kind: 'error', text: 'No call was selected: tick the waiting calls to cancel, then press the button.' };
  const parts = [
    ...(canceled > 0 ? [`${calls(canceled)} canceled (they will not be dialled).`] : []),
    ...(already > 0 ? [`${calls(already)} had already been canceled.`] : []),
    ...(tooLate > 0
      ? [`Not canceled: ${calls(tooLate)} already being dialled or ended, which can no longer be canceled.`]
      : []),
  ];
  return { kind: tooLate > 0 ? 'error' : 'ok', text: parts.join(' ') };
}

/** A delivery's status as a person reads it ("call.failed delivered", not "call.failed succeeded"); unknown ones as stored. */
const DELIVERY_STATUS_WORDS: Record<string, string> = {
  pending: 'pending',
  succeeded: 'delivered',
  failed: 'failed',
  held: 'held',
};

export function deliveryStatusWords(status: string): string {
  return DELIVERY_STATUS_WORDS[status] ?? status;
}

/** Why an endpoint is disabled, its times written as every page writes them ("answered 410 Gone at 2026-11-23 10:42:07 UTC"). */
export function disabledReasonWords(reason: string | null, times: ShownTimes): string | null {
  return reason && withShownTimes(reason, times);
}

/** Who made an audit entry. */
export function actorWords(kind: 'user' | 'operator' | 'service' | 'agent', email: string | null): string {
  if (kind === 'user') return email ?? 'a deleted user';
  if (kind === 'agent') return 'the agent (during a call)';
  return kind === 'operator' ? 'operator (callctl)' : 'the service';
}

// ---- The webhook endpoint and the default agent, in the tenant's words (no environment variables or operator
