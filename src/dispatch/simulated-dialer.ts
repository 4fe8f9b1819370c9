// The simulated dialer (the default): no telephony, scripted outcomes. A simulated call's course is a function of
// its number and the clock (rings SIMULATED_RING_MS, talks SIMULATED_TALK_MS), so any process can advance it, and
// calls placed by a process that died still end.
import fs from 'node:fs';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { FailureReason } from '../domain/call-lifecycle.js';
import { applyCallUpdate } from '../calls/transition.js';
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

/** Moves every simulated call whose ring or talk time is over to its next status. Returns how many moved. */
export async function advanceSimulatedCalls(prisma: PrismaClient, now: Date, timing: { ringMs: number; talkMs: number }): Promise<number> {
  const rang = await prisma.call.findMany({
    where: { status: 'dialing', providerCallId: { startsWith: SIMULATED_PREFIX }, startedAt: { lte: new Date(now.getTime() - timing.ringMs) } },
    select: { id: true, phoneNumber: true },
    take: 500,
  });
  const talked = await prisma.call.findMany({
    where: { status: 'in_progress', providerCallId: { startsWith: SIMULATED_PREFIX }, answeredAt: { lte: new Date(now.getTime() - timing.talkMs) } },
    select: { id: true },
    take: 500,
  });
  const context = { now, source: 'provider' };
  await Promise.all([
    ...rang.map((call) => {
      const reason = SIMULATED_FAILURES[call.phoneNumber];
      return applyCallUpdate(prisma, call.id, reason ? { kind: 'failed', reason } : { kind: 'answered' }, context);
    }),
    ...talked.map((call) => applyCallUpdate(prisma, call.id, { kind: 'completed' }, context)),
  ]);
  return rang.length + talked.length;
}
