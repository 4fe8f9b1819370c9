// Calls as operators see them: a list per account, and one call with its events and deliveries.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { CallStatus } from '../generated/prisma/enums.js';
import { isUuid } from '../domain/ids.js';
import { callView } from '../schemas/call.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';

const STATUSES: CallStatus[] = ['initiated', 'dialing', 'in_progress', 'completed', 'failed'];

export async function listCalls(prisma: PrismaClient, accountId: string, status?: string, limit = 100) {
  const account = await findAccount(prisma, accountId);
  if (status !== undefined && !(STATUSES as string[]).includes(status)) {
    throw new AdminError(`Unknown status "${status}" (expected one of ${STATUSES.join(', ')})`);
  }
  const calls = await prisma.call.findMany({
    where: { accountId: account.id, ...(status ? { status: status as CallStatus } : {}) },
    orderBy: { createdAt: 'desc' },
    take: limit,
  });
  return { calls: calls.map(callView) };
}

export async function showCall(prisma: PrismaClient, callId: string) {
  const call = isUuid(callId)
    ? await prisma.call.findUnique({
        where: { id: callId },
        include: {
          events: { orderBy: { occurredAt: 'asc' } },
          deliveries: { orderBy: { createdAt: 'asc' }, include: { attempts: { orderBy: { attemptNumber: 'asc' } } } },
        },
      })
    : null;
  if (!call) throw new AdminError(`No call ${callId}`);
  return {
    call: {
      ...callView(call),
      account_id: call.accountId,
      from_number: call.fromNumber,
      not_before: call.notBefore.toISOString(),
      expires_at: call.expiresAt.toISOString(),
      dial_attempts: call.dialAttempts,
      events: call.events.map((e) => ({
        from_status: e.fromStatus,
        to_status: e.toStatus,
        failure_reason: e.failureReason,
        source: e.source,
        occurred_at: e.occurredAt.toISOString(),
      })),
      deliveries: call.deliveries.map((d) => ({
        id: d.id,
        event_type: d.eventType,
        status: d.status,
        attempt_count: d.attemptCount,
        next_attempt_at: d.nextAttemptAt.toISOString(),
        attempts: d.attempts.map((a) => ({
          attempt: a.attemptNumber,
          started_at: a.startedAt.toISOString(),
          duration_ms: a.durationMs,
          response_status: a.responseStatus,
          error: a.error,
        })),
      })),
    },
  };
}
