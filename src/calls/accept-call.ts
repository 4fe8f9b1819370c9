// Accepting a trigger: number check, agent selection and tenancy, calling window, queue bound; then one
// transaction that stores the call, its first event and the idempotent response, and wakes the dispatchers.
import type { Principal } from '../plugins/auth.js';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { isValidE164 } from '../domain/phone-number.js';
import { canUseAgent } from '../domain/tenancy.js';
import { AppError } from '../errors.js';
import type { TriggerBody } from '../schemas/trigger.js';

export const CALLS_CHANNEL = 'oct_calls';
/** What a 429 for a full queue tells the client to wait: about one short call's time. */
export const QUEUE_FULL_RETRY_SECONDS = 30;

export interface AcceptLimits {
  maxQueuedCalls: number;
  queuedCallTtlHours: number;
}

export interface AcceptInput {
  principal: Principal;
  body: TriggerBody;
  now: Date;
  limits: AcceptLimits;
  /** Runs inside the acceptance transaction (the idempotency record). */
  inTransaction?: (tx: Prisma.TransactionClient, callId: string) => Promise<void>;
}

async function selectAgent(prisma: PrismaClient, principal: Principal, requested: string | undefined) {
  const agentId = requested ?? principal.defaultAgentId;
  if (!agentId) throw new AppError('NO_DEFAULT_AGENT');
  const agent = await prisma.agent.findUnique({ where: { id: agentId } });
  if (!agent) throw new AppError(requested ? 'AGENT_NOT_FOUND' : 'NO_DEFAULT_AGENT');
  if (!canUseAgent({ id: principal.accountId, kind: principal.accountKind }, agent)) throw new AppError('AGENT_FORBIDDEN');
  if (!agent.phoneNumber) throw new AppError('AGENT_HAS_NO_PHONE');
  return { ...agent, phoneNumber: agent.phoneNumber };
}

export async function acceptCall(prisma: PrismaClient, input: AcceptInput): Promise<{ callId: string }> {
  const { principal, body, now, limits } = input;
  if (!isValidE164(body.phone_number)) throw new AppError('INVALID_PHONE_NUMBER');
  const agent = await selectAgent(prisma, principal, body.agent_id);

  const windows = callingWindowsSchemaCheck(agent.callingWindows);
  let notBefore = now;
  if (!isWithinCallingWindow(windows, agent.timezone, now)) {
    if (agent.outsideWindowPolicy === 'reject') throw new AppError('OUTSIDE_CALLING_WINDOW');
    notBefore = nextWindowOpening(windows, agent.timezone, now) ?? now;
  }
  // The time to live counts from when the call may first be dialled: a call queued for tomorrow's window is not stale.
  const expiresAt = new Date(notBefore.getTime() + limits.queuedCallTtlHours * 3600_000);

  return prisma.$transaction(async (tx) => {
    // One acceptance at a time per account, so the queue bound is exact rather than approximate. The count is a
    // statement of its own: under READ COMMITTED it then sees every call committed while we waited for the lock.
    await tx.$executeRaw`SELECT 1 FROM accounts WHERE id = ${principal.accountId}::uuid FOR UPDATE`;
    const [{ waiting }] = await tx.$queryRaw<[{ waiting: number }]>`
      SELECT count(*)::int AS waiting FROM calls WHERE account_id = ${principal.accountId}::uuid AND status = 'initiated'`;
    if (waiting >= limits.maxQueuedCalls) {
      throw new AppError('TOO_MANY_WAITING', { seconds: QUEUE_FULL_RETRY_SECONDS }, { 'retry-after': String(QUEUE_FULL_RETRY_SECONDS) });
    }
    const call = await tx.call.create({
      data: {
        accountId: principal.accountId,
        agentId: agent.id,
        phoneNumber: body.phone_number,
        fromNumber: agent.phoneNumber,
        name: body.name ?? null,
        email: body.email ?? null,
        metadata: body.metadata ?? {},
        status: 'initiated',
        notBefore,
        expiresAt,
        createdAt: now,
        events: { create: { toStatus: 'initiated', source: 'api', occurredAt: now } },
      },
      select: { id: true },
    });
    await input.inTransaction?.(tx, call.id);
    await tx.$executeRaw`SELECT pg_notify(${CALLS_CHANNEL}, ${principal.accountId})`;
    return { callId: call.id };
  });
}
