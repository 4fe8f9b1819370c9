// A stored call as its public view (schemas/call.ts): the `data` of every webhook event and what callctl shows.
import type { AttemptOutcomeData, CallData } from '../../schemas/call.js';
import type { CallRow as Call } from '../storage/index.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The attempts dialled so far: the finished ones, and the current one once it is dialling (or ended after a dial).
 * A call that ended before its first dial (expired, canceled, do_not_call while waiting) counts 0. `attemptsEnded`:
 * how many entries attempt_outcomes holds.
 */
export function attemptsDialled(
  call: Pick<Call, 'attempt' | 'startedAt' | 'status'> & { attemptsEnded: number },
): number {
  const current = call.status !== 'initiated' && call.startedAt !== null && call.attemptsEnded < call.attempt ? 1 : 0;
  return call.attemptsEnded + current;
}

export function callView(call: Call): CallData {
  const outcomes = (Array.isArray(call.attemptOutcomes) ? call.attemptOutcomes : []) as AttemptOutcomeData[];
  return {
    call_id: call.id,
    status: call.status,
    agent_id: call.agentId,
    phone_number: call.phoneNumber,
    name: call.name,
    email: call.email,
    metadata: (call.metadata ?? {}) as CallData['metadata'],
    created_at: call.createdAt.toISOString(),
    started_at: iso(call.startedAt),
    answered_at: iso(call.answeredAt),
    ended_at: iso(call.endedAt),
    duration_seconds: call.durationSeconds,
    failure_reason: call.failureReason,
    attempt: call.attempt,
    attempts: attemptsDialled({ ...call, attemptsEnded: outcomes.length }),
    attempt_outcomes: outcomes,
    answered_by: call.answeredBy,
    voicemail_left: call.voicemailLeft,
    scheduled_at: iso(call.scheduledAt),
    timezone: call.timezone,
    timezone_source: call.timezoneSource,
  };
}
