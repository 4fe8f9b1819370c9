// Calls as operators see them: a list per account, and one call with its events and deliveries.
import type { PrismaClient } from '../generated/prisma/client.js';
import { CALL_STATUSES, isOneOf, type CallStatus } from '../domain/call-vocabulary.js';
import { isUuid } from '../domain/ids.js';
import { RawJson } from '../domain/raw-json.js';
import { callView } from '../../schemas/call.js';
import { findCallWithHistory, listCallsOfAccount, type CallWithMetadataText } from '../storage/calls.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';

export const isStatus = (status: string): status is CallStatus => isOneOf(CALL_STATUSES, status);
export const unknownStatus = (status: string) =>
  `Unknown status "${status}" (expected one of ${CALL_STATUSES.join(', ')})`;

export async function listCalls(prisma: PrismaClient, accountId: string, status?: string, limit = 100) {
  const account = await findAccount(prisma, accountId);
  if (status !== undefined && !isStatus(status)) throw new AdminError(unknownStatus(status));
  const calls = await listCallsOfAccount(prisma, { accountId: account.id, status: status ?? null, limit });
  return { calls: calls.map(operatorView) };
}

/**
 * The public view with the metadata's text as the client wrote it (RawJson: callctl writes it as is), so that its
 * key order survives, integer-like keys included.
 */
function operatorView(call: CallWithMetadataText) {
  return { ...callView({ ...call, metadata: null }), metadata: new RawJson(call.metadata) };
}

export async function showCall(prisma: PrismaClient, callId: string) {
  const call = isUuid(callId) ? await findCallWithHistory(prisma, callId) : null;
  if (!call) throw new AdminError(`No call ${callId}`);
  return {
    call: {
      ...operatorView(call),
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
        // A finished delivery has no next attempt (the column keeps the last schedule).
        next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
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
