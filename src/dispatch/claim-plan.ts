// A claim's plan for the calls it locked: those in their window dialled, the others put back, the listed ones ended.
import { planCallBatch } from '../calls/transition.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { windowZoneOf } from '../domain/recipient-timezone.js';
import type { CallRow as Call, ClaimCandidate } from '../storage/index.js';
import type { DialCall } from './dials.js';
import type { DispatcherOptions } from './dispatcher-options.js';

/** A call whose agent's stored windows or zone cannot be read waits this long before the next try. */
const UNREADABLE_WINDOWS_RETRY_MS = 60_000;

/**
 * Run in the claim's transaction on the calls it read: the calls within their window go dialling under a lease to
 * `owner` (the result), those outside it wait for its opening, and those on the do-not-call list end. `rescheduled`:
 * calls were put back or ended, so the calls behind them may be dialable.
 */
export function planClaim(
  candidates: ClaimCandidate[],
  now: Date,
  owner: string,
  leaseMs: number,
  options: DispatcherOptions,
) {
  const { now: clock, webhooks } = options;
  // An attempt's answering-machine verdict is its own: a later attempt never ends on an earlier one's machine.
  const extra = {
    leaseOwner: owner,
    leaseExpiresAt: new Date(now.getTime() + leaseMs),
    answeredBy: null,
    voicemailLeft: null,
  };
  // The call.started deliveries are written leased to this process's worker, which sends them once this commits.
  const lease = webhooks ? { eventType: 'call.started', until: new Date(now.getTime() + webhooks.leaseMs) } : undefined;
  const ready: DialCall[] = [];
  const waiting: { id: string; notBefore: Date }[] = [];
  // Listed after acceptance: ended here, in the claim's transaction, with its call.failed; never dialled.
  const listed: Call[] = [];
  for (const { agentTimezone, agentCallingWindows, onDoNotCallList, ...call } of candidates) {
    if (onDoNotCallList) {
      listed.push(call);
      continue;
    }
    try {
      const windows = callingWindowsSchemaCheck(agentCallingWindows);
      // The callee's zone the call was accepted with, or the agent's as it is now (src/domain/recipient-timezone.ts).
      const zone = windowZoneOf(call, agentTimezone);
      if (isWithinCallingWindow(windows, zone, now)) ready.push(call);
      else waiting.push({ id: call.id, notBefore: nextWindowOpening(windows, zone, now) ?? now });
    } catch (error) {
      // Stored windows or a zone that no longer validate (edited by hand): this call waits, the others go on.
      options.log.error(
        { err: error, callId: call.id, agentId: call.agentId },
        'agent calling windows unreadable; call held back',
      );
      waiting.push({ id: call.id, notBefore: new Date(now.getTime() + UNREADABLE_WINDOWS_RETRY_MS) });
    }
  }
  // Dated now, once the candidates are read, not when the pass began: a call that ended meanwhile (its slot is
  // what this claim takes) is then never seen to overlap the call that replaces it.
  const claimedAt = clock();
  const { applied, batch } = planCallBatch(
    [
      ...ready.map((call) => ({ call, change: { update: { kind: 'dialing' }, extra } as const })),
      ...listed.map((call) => ({ call, change: { update: { kind: 'failed', reason: 'do_not_call' } } as const })),
    ],
    { now: claimedAt, source: 'dispatcher', lease },
  );
  const voicemail = new Map(
    ready.map(({ id, agentVoicemail, agentVoicemailMessage }) => [id, { agentVoicemail, agentVoicemailMessage }]),
  );
  const dialling = applied
    .filter((a) => a.steps.length > 0 && a.call.status === 'dialing')
    .map((a) => ({ ...a.call, ...voicemail.get(a.call.id)! }));
  return { waiting, batch, result: dialling, rescheduled: waiting.length > 0 || listed.length > 0 };
}
