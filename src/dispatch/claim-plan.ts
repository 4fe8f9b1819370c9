// A claim's plan for the calls it locked: those in their window and allowed by the calling rules dialled (each with its
// ledger row), the others put back or held, the listed ones ended.
import { planCallBatch } from '../calls/transition.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { windowZoneOf } from '../domain/recipient-timezone.js';
import type { CalleeLedger, CallRow as Call, ClaimCandidate, ClaimPlan } from '../storage/index.js';
import { dialsOf, screenClaim } from './claim-compliance.js';
import type { DialCall } from './dials.js';
import type { DispatcherOptions } from './dispatcher-options.js';

/** A call whose agent's stored windows or zone cannot be read waits this long before the next try. */
const UNREADABLE_WINDOWS_RETRY_MS = 60_000;

/**
 * Run in the claim's transaction on the calls it read: the calls within their window and allowed by the calling rules
 * (claim-compliance.ts, through `ledger`) go dialling under a lease to `owner` (the result), those outside it wait for
 * its opening, those the rules hold wait as their record says, and those on the do-not-call list end. `rescheduled`:
 * calls were put back, held or ended, so the calls behind them may be dialable.
 */
export async function planClaim(
  candidates: ClaimCandidate[],
  ledger: CalleeLedger,
  now: Date,
  owner: string,
  leaseMs: number,
  options: DispatcherOptions,
): Promise<ClaimPlan<DialCall[]> & { rescheduled: boolean }> {
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
  const within: Omit<ClaimCandidate, 'agentTimezone' | 'agentCallingWindows' | 'onDoNotCallList'>[] = [];
  const waiting: { id: string; notBefore: Date }[] = [];
  // Listed after acceptance: ended here, in the claim's transaction, with its call.failed; never dialled.
  const onList: typeof within = [];
  for (const { agentTimezone, agentCallingWindows, onDoNotCallList, ...call } of candidates) {
    if (onDoNotCallList) {
      onList.push(call);
      continue;
    }
    try {
      const windows = callingWindowsSchemaCheck(agentCallingWindows);
      // The callee's zone the call was accepted with, or the agent's as it is now (src/domain/recipient-timezone.ts).
      const zone = windowZoneOf(call, agentTimezone);
      if (isWithinCallingWindow(windows, zone, now)) within.push(call);
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
  // The calling rules (issue 48): the calls they hold wait with their records; the allowed ones carry theirs into
  // call.started, written in this transaction.
  const { ready, listed, records, held } = await screenClaim(within, onList, now, ledger, options);
  // Dated now, once the candidates are read, not when the pass began: a call that ended meanwhile (its slot is
  // what this claim takes) is then never seen to overlap the call that replaces it.
  const claimedAt = clock();
  const { applied, batch } = planCallBatch(
    [
      ...ready.map((call) => ({ call, change: { update: { kind: 'dialing' }, extra } as const })),
      ...listed.map((call: Call) => ({ call, change: { update: { kind: 'failed', reason: 'do_not_call' } } as const })),
    ],
    { now: claimedAt, source: 'dispatcher', lease },
  );
  // What the dial needs besides the call: the agent's voicemail setting, the account carrier it goes through.
  const voicemail = new Map(
    ready.map(({ id, agentVoicemail, agentVoicemailMessage, carrierInUse }) => [
      id,
      { agentVoicemail, agentVoicemailMessage, carrierInUse },
    ]),
  );
  const dialling = applied
    .filter((a) => a.steps.length > 0 && a.call.status === 'dialing')
    .map((a) => ({ ...a.call, ...voicemail.get(a.call.id)! }));
  return {
    waiting,
    batch,
    result: dialling,
    dials: dialsOf(ready, new Set(dialling.map((c) => c.id))),
    records,
    rescheduled: waiting.length > 0 || listed.length > 0 || held > 0,
  };
}
