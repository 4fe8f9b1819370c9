// The simulated dialer (the default): no telephony, scripted outcomes. A simulated call's course is a function of
// its number, what it was dialled with and the clock (rings SIMULATED_RING_MS, talks SIMULATED_TALK_MS), so any
// process can advance it, and calls placed by a process that died still end. A ring of `min-max` milliseconds gives
// each attempt its own ring in that range, drawn from the call's id and dial time (the same in every process).
import fs from 'node:fs';
import type { SimulatedRing } from '../config.js';
import type { CallUpdate, FailureReason } from '../domain/call-lifecycle.js';
import { VOICEMAIL_POLICIES, type VoicemailPolicy } from '../../schemas/vocabulary.js';
import { transitionCalls, type CallChange } from '../calls/transition.js';
import type { AdvanceDue, CallRow, Storage } from '../storage/index.js';
import type { DialRequest, Dialer } from './dialer.js';

export const SIMULATED_PREFIX = 'sim_';

/** Test numbers: these fail after ringing; every other number answers and completes. */
export const SIMULATED_FAILURES: Readonly<Record<string, FailureReason>> = {
  '+15005550001': 'busy',
  '+15005550002': 'no_answer',
  '+15005550003': 'provider_error',
};

/**
 * The voicemail test number: a machine answers it. With the agent's voicemail detection on, the machine is detected
 * (answered_by machine) and the call ends failed with reason voicemail (voicemail_left: whether the agent leaves a
 * message); with detection off it is answered and completes like any other number.
 */
export const SIMULATED_VOICEMAIL = '+15005550004';

/**
 * The provider id of a simulated dial: `sim_<call id>`, followed by `;voicemail=<policy>` when detection was asked for.
 * The id is the simulated provider's only memory of the dial (any process advances the call), as Twilio keeps the
 * MachineDetection it was dialled with.
 */
function simulatedCallId(request: DialRequest): string {
  const id = `${SIMULATED_PREFIX}${request.callId}`;
  return request.voicemail === 'off' ? id : `${id}${DETECTION_MARK}${request.voicemail}`;
}
const DETECTION_MARK = ';voicemail=';

/** The voicemail policy a simulated call was dialled with (off when none). */
function detectionOf(providerCallId: string | null): VoicemailPolicy {
  const policy = providerCallId?.split(DETECTION_MARK)[1];
  return VOICEMAIL_POLICIES.find((p) => p === policy) ?? 'off';
}

/** The answer of a simulated call: answered, with detection's verdict when it was asked for. */
function answer(call: Pick<CallRow, 'phoneNumber' | 'providerCallId'>): Omit<CallChange, 'at'> {
  const detection = detectionOf(call.providerCallId);
  if (detection === 'off') return { update: { kind: 'answered' } };
  const machine = call.phoneNumber === SIMULATED_VOICEMAIL;
  return {
    update: { kind: 'answered' },
    extra: machine
      ? { answeredBy: 'machine', voicemailLeft: detection === 'leave_message' }
      : { answeredBy: 'human', voicemailLeft: null },
  };
}

/** Test number for retries: busy on its first attempt, answers and completes on every later one. */
export const SIMULATED_BUSY_THEN_ANSWERS = '+15005550005';

/** How the scripted ring of a call's attempt ends: the reason it fails, or undefined when it is answered. */
function ringOutcome(call: { phoneNumber: string; attempt: number }): FailureReason | undefined {
  if (call.phoneNumber === SIMULATED_BUSY_THEN_ANSWERS) return call.attempt === 1 ? 'busy' : undefined;
  return SIMULATED_FAILURES[call.phoneNumber];
}

export interface SimulatedTiming {
  ringMs: SimulatedRing;
  talkMs: number;
}

const shortestRing = (ring: SimulatedRing) => (typeof ring === 'number' ? ring : ring.minMs);

/**
 * The ring of one attempt: the fixed ring, or a point of the range picked by a hash of the call's id and the time its
 * attempt was dialled (started_at), so that every process, and a process started after a crash, finds the same.
 */
export function ringOf(ring: SimulatedRing, call: { id: string; startedAt: Date | null }): number {
  if (typeof ring === 'number') return ring;
  // FNV-1a (32 bits): spread enough for a stand-in's ring, and cheap.
  let hash = 0x811c9dc5;
  for (const char of `${call.id}@${call.startedAt?.getTime() ?? 0}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return ring.minMs + ((hash >>> 0) % (ring.maxMs - ring.minMs + 1));
}

/**
 * When (ms from now) the dispatcher should advance the calls it has just dialled: the end of each one's ring and of
 * its talk, a few milliseconds late (so the step is due), merged to 10 ms.
 */
export function simulatedWakeups(
  timing: SimulatedTiming,
  calls: readonly { id: string; startedAt: Date | null }[],
): number[] {
  const rings = typeof timing.ringMs === 'number' ? [timing.ringMs] : calls.map((call) => ringOf(timing.ringMs, call));
  const at = new Set<number>();
  for (const ring of rings) {
    at.add(Math.ceil((ring + 5) / 10) * 10);
    at.add(Math.ceil((ring + timing.talkMs + 10) / 10) * 10);
  }
  return [...at].sort((a, b) => a - b);
}

export class SimulatedDialer implements Dialer {
  readonly kind = 'simulated' as const;

  /**
   * `dialLog`: a file that gets one line per dial (SIMULATED_DIAL_LOG), so that dials can be counted across processes:
   * the call's id, followed by `/<attempt>` from a retried call's second attempt on (a line is one attempt's dial).
   */
  constructor(private readonly dialLog?: string) {}

  async dial(request: DialRequest) {
    if (this.dialLog)
      fs.appendFileSync(this.dialLog, `${request.callId}${(request.attempt ?? 1) > 1 ? `/${request.attempt}` : ''}\n`);
    return { providerCallId: simulatedCallId(request) };
  }
}

/**
 * Moves every simulated call whose ring or talk time is over to its next status. Each step is dated when the script
 * says it happened (dialled + ring, answered + talk), not when this pass runs: a call in progress while no process ran
 * (a restart, a crash) still lasts its scripted length. All the calls due move in one transaction (one transaction per
 * call cost the bench's end-to-end rate: docs/performance.md#set-based-background-work). Returns how many moved.
 */
export async function advanceSimulatedCalls(
  storage: Storage,
  now: Date,
  timing: SimulatedTiming,
  queuedCallTtlMs?: number,
): Promise<number> {
  // With a range, the query finds every call past the shortest ring; those whose own ring is not over are left.
  const due: AdvanceDue = {
    providerPrefix: SIMULATED_PREFIX,
    rangBefore: new Date(now.getTime() - shortestRing(timing.ringMs)),
    talkedBefore: new Date(now.getTime() - timing.talkMs),
  };
  const rangOut = (call: { id: string; status: string; startedAt: Date | null }) =>
    call.status !== 'dialing' || call.startedAt!.getTime() + ringOf(timing.ringMs, call) <= now.getTime();
  let moved = 0;
  // A call that rang and talked out while no process ran takes both steps in this pass: answered, then completed.
  for (let round = 0; round < 2; round++) {
    const rows = (await storage.calls.callsDueToAdvance(due)).filter(rangOut);
    if (rows.length === 0) break;
    const answering = rows.some((call) => call.status === 'dialing');
    // One transaction for all of them, each step dated at its own scripted instant.
    const applied = await transitionCalls(
      storage,
      { kind: 'dueToAdvance', ids: rows.map((call) => call.id), due },
      (call): CallChange => {
        if (call.status === 'in_progress') {
          // A detected machine hears the message (or nothing) and is hung up on: the call failed, reason voicemail.
          const end: CallUpdate =
            call.answeredBy === 'machine' ? { kind: 'failed', reason: 'voicemail' } : { kind: 'completed' };
          return { update: end, at: new Date(call.answeredAt!.getTime() + timing.talkMs) };
        }
        const at = new Date(call.startedAt!.getTime() + ringOf(timing.ringMs, call));
        const reason = ringOutcome(call);
        return reason ? { update: { kind: 'failed', reason }, at } : { ...answer(call), at };
      },
      // An attempt that ends here may be retried: its next one waits with this time to live.
      { now, source: 'provider', queuedCallTtlMs },
    );
    moved += applied.length;
    if (!answering) break;
  }
  return moved;
}
