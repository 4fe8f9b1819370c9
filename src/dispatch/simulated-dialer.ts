// The simulated dialer (the default): no telephony, scripted outcomes. A simulated call's course is a function of
// its number and the clock (rings SIMULATED_RING_MS, talks SIMULATED_TALK_MS), so any process can advance it, and
// calls placed by a process that died still end.
import fs from 'node:fs';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { FailureReason } from '../domain/call-lifecycle.js';
import { CALL_COLUMNS, transitionCalls, type CallChange } from '../calls/transition.js';
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
  /** Dial requests this process made, per call (tests assert "at most once"). */
  readonly dials = new Map<string, number>();

  /** `dialLog`: a file that gets one line per dial, so tests can count dials across process restarts. */
  constructor(private readonly dialLog?: string) {}

  async dial(request: DialRequest) {
    this.dials.set(request.callId, (this.dials.get(request.callId) ?? 0) + 1);
    if (this.dialLog) fs.appendFileSync(this.dialLog, `${request.callId}\n`);
    return { providerCallId: `${SIMULATED_PREFIX}${request.callId}` };
  }
}

/** Simulated calls whose ring or talk time is over, up to 500 (a cheap read; the move locks them again). */
const DUE = `
  SELECT id FROM calls
   WHERE (status = 'dialing' AND started_at <= $1 OR status = 'in_progress' AND answered_at <= $2)
     AND starts_with(provider_call_id, '${SIMULATED_PREFIX}')
   LIMIT 500`;
/** The same calls, locked; those another process is moving right now are left to it. */
const LOCK_DUE = `
  SELECT ${CALL_COLUMNS} FROM calls c
   WHERE c.id = ANY($3::uuid[])
     AND (c.status = 'dialing' AND c.started_at <= $1 OR c.status = 'in_progress' AND c.answered_at <= $2)
     AND starts_with(c.provider_call_id, '${SIMULATED_PREFIX}')
   ORDER BY c.id FOR UPDATE SKIP LOCKED`;

/** Moves every simulated call whose ring or talk time is over to its next status, in one transaction. Returns how many moved. */
export async function advanceSimulatedCalls(prisma: PrismaClient, now: Date, timing: { ringMs: number; talkMs: number }): Promise<number> {
  const rangBefore = new Date(now.getTime() - timing.ringMs);
  const talkedBefore = new Date(now.getTime() - timing.talkMs);
  const { rows } = await sqlPool(prisma).query<{ id: string }>({ name: 'oct_sim_due', text: DUE, values: [rangBefore, talkedBefore] });
  if (rows.length === 0) return 0;
  const moved = await transitionCalls(
    prisma,
    { name: 'oct_sim_lock_due', text: LOCK_DUE, values: [rangBefore, talkedBefore, rows.map((r) => r.id)] },
    (call): CallChange => {
      if (call.status === 'in_progress') return { update: { kind: 'completed' } };
      const reason = SIMULATED_FAILURES[call.phoneNumber];
      return { update: reason ? { kind: 'failed', reason } : { kind: 'answered' } };
    },
    { now, source: 'provider' },
  );
  return moved.length;
}
