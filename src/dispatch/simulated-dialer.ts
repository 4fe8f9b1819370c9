// The simulated dialer (the default): no telephony, scripted outcomes. A simulated call's course is a function of
// its number and the clock (rings SIMULATED_RING_MS, talks SIMULATED_TALK_MS), so any process can advance it, and
// calls placed by a process that died still end.
import fs from 'node:fs';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { FailureReason } from '../domain/call-lifecycle.js';
import { transitionCalls, type CallChange } from '../calls/transition.js';
import { callsDueToAdvance, lockCallsDueToAdvance, type AdvanceDue } from '../storage/calls.js';
import { sqlPool } from '../storage/database.js';
import type { DialRequest, Dialer } from './dialer.js';

export const SIMULATED_PREFIX = 'sim_';

/** Test numbers: these fail after ringing; every other number answers and completes. */
export const SIMULATED_FAILURES: Readonly<Record<string, FailureReason>> = {
  '+15005550001': 'busy',
  '+15005550002': 'no_answer',
  '+15005550003': 'provider_error',
};

export class SimulatedDialer implements Dialer {
  readonly kind = 'simulated' as const;

  /** `dialLog`: a file that gets one line per dial (SIMULATED_DIAL_LOG), so that dials can be counted across processes. */
  constructor(private readonly dialLog?: string) {}

  async dial(request: DialRequest) {
    if (this.dialLog) fs.appendFileSync(this.dialLog, `${request.callId}\n`);
    return { providerCallId: `${SIMULATED_PREFIX}${request.callId}` };
  }
}

/**
 * Moves every simulated call whose ring or talk time is over to its next status. Each step is dated when the script
 * says it happened (dialled + ring, answered + talk), not when this pass runs: a call in progress while no process
 * ran (a restart, a crash) still lasts its scripted length. All the calls due move in one transaction (one per
 * transaction per call cost the bench's end-to-end rate a third). Returns how many moved.
 */
export async function advanceSimulatedCalls(
  prisma: PrismaClient,
  now: Date,
  timing: { ringMs: number; talkMs: number },
): Promise<number> {
  const due: AdvanceDue = {
    providerPrefix: SIMULATED_PREFIX,
    rangBefore: new Date(now.getTime() - timing.ringMs),
    talkedBefore: new Date(now.getTime() - timing.talkMs),
  };
  let moved = 0;
  // A call that rang and talked out while no process ran takes both steps in this pass: answered, then completed.
  for (let round = 0; round < 2; round++) {
    const rows = await callsDueToAdvance(sqlPool(prisma), due);
    if (rows.length === 0) break;
    const answering = rows.some((call) => call.status === 'dialing');
    // One transaction for all of them, each step dated at its own scripted instant.
    const applied = await transitionCalls(
      prisma,
      lockCallsDueToAdvance(
        rows.map((call) => call.id),
        due,
      ),
      (call): CallChange => {
        if (call.status === 'in_progress')
          return { update: { kind: 'completed' }, at: new Date(call.answeredAt!.getTime() + timing.talkMs) };
        const at = new Date(call.startedAt!.getTime() + timing.ringMs);
        const reason = SIMULATED_FAILURES[call.phoneNumber];
        return { update: reason ? { kind: 'failed', reason } : { kind: 'answered' }, at };
      },
      { now, source: 'provider' },
    );
    moved += applied.length;
    if (!answering) break;
  }
  return moved;
}
