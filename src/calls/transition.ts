// Applies lifecycle updates to stored calls: row lock, the pure state machine, the call's times, one call event per
// step, and the webhook outbox, all in one transaction. Duplicated or out-of-order updates change nothing.
import type { Call, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { plan, type CallUpdate, type Transition } from '../domain/call-lifecycle.js';
import { enqueueWebhook } from '../webhooks/outbox.js';
import { CALLS_CHANNEL } from './accept-call.js';

export interface UpdateContext {
  now: Date;
  /** Who reports it: dispatcher, provider, expiry, operator. */
  source: string;
}

function fieldsFor(call: Call, step: Transition, update: CallUpdate, now: Date): Prisma.CallUpdateInput {
  switch (step.to) {
    case 'dialing':
      return { status: 'dialing', startedAt: now };
    case 'in_progress':
      return { status: 'in_progress', answeredAt: now };
    case 'completed': {
      const answeredAt = call.answeredAt ?? now;
      const reported = update.kind === 'completed' ? update.durationSeconds : undefined;
      return { status: 'completed', endedAt: now, durationSeconds: reported ?? Math.max(0, Math.round((now.getTime() - answeredAt.getTime()) / 1000)), leaseOwner: null, leaseExpiresAt: null };
    }
    case 'failed':
      return {
        status: 'failed',
        failureReason: step.failureReason,
        endedAt: now,
        durationSeconds: call.answeredAt ? Math.max(0, Math.round((now.getTime() - call.answeredAt.getTime()) / 1000)) : null,
        leaseOwner: null,
        leaseExpiresAt: null,
      };
    default:
      return {};
  }
}

/** Within a transaction that already holds the call's row lock. Returns the steps taken and the updated call. */
export async function applyLocked(tx: Prisma.TransactionClient, call: Call, update: CallUpdate, context: UpdateContext, extra: Prisma.CallUpdateInput = {}) {
  const steps = plan(call.status, update);
  let current = call;
  for (const [i, step] of steps.entries()) {
    const data = { ...fieldsFor(current, step, update, context.now), ...(i === steps.length - 1 ? extra : {}) };
    current = await tx.call.update({ where: { id: call.id }, data });
    const event = await tx.callEvent.create({
      data: { callId: call.id, fromStatus: step.from, toStatus: step.to, failureReason: step.failureReason, source: context.source, occurredAt: context.now },
      select: { id: true },
    });
    if (step.event) await enqueueWebhook(tx, current, event.id, step.event, context.now);
  }
  if (steps.some((s) => s.to === 'completed' || s.to === 'failed')) {
    // A slot is free: wake the dispatchers.
    await tx.$executeRaw`SELECT pg_notify(${CALLS_CHANNEL}, ${call.accountId})`;
  }
  return { steps, call: current };
}

export async function lockCall(tx: Prisma.TransactionClient, callId: string): Promise<Call | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM calls WHERE id = ${callId}::uuid FOR UPDATE`;
  return rows[0] ? tx.call.findUnique({ where: { id: callId } }) : null;
}

export async function applyCallUpdate(prisma: PrismaClient, callId: string, update: CallUpdate, context: UpdateContext, extra: Prisma.CallUpdateInput = {}) {
  return prisma.$transaction(async (tx) => {
    const call = await lockCall(tx, callId);
    if (!call) return { steps: [] as Transition[], call: null };
    return applyLocked(tx, call, update, context, extra);
  });
}
