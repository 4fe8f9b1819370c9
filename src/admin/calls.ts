// Calls as operators see them: a list per account, one call with its events and deliveries; and cancelling calls
// that still wait (callctl and the dashboard), each on calls the actor reaches (reach.ts; the calls listed for a
// client included).
import { CALL_STATUSES, isOneOf, type CallStatus } from '../../schemas/vocabulary.js';
import { canonicalUuid, isUuid } from '../../schemas/uuid.js';
import { RawJson } from '../domain/raw-json.js';
import { callView } from '../calls/call-view.js';
import { transitionCalls } from '../calls/transition.js';
import type { CallWithMetadataText, Storage } from '../storage/index.js';
import type { AuditAction } from '../domain/audit-actions.js';
import type { Actor } from './audit.js';
import { AdminError } from './errors.js';
import { findAccount, scopeOfActor } from './reach.js';

export const isStatus = (status: string): status is CallStatus => isOneOf(CALL_STATUSES, status);
export const unknownStatus = (status: string) =>
  `Unknown status "${status}" (expected one of ${CALL_STATUSES.join(', ')})`;

/**
 * An account's most recent calls, those an agency's key placed on its agents included (listed for it): such a call
 * carries `listed_for_account_id` and `triggered_by` ("<agency> (agency key)"); `account_id` is the key's account.
 * The account is one the actor reaches.
 */
export async function listCalls(
  storage: Storage,
  accountId: string,
  status: string | undefined,
  actor: Actor,
  limit = 100,
) {
  const account = await findAccount(storage, accountId, actor);
  if (status !== undefined && !isStatus(status)) throw new AdminError(unknownStatus(status));
  const calls = await storage.calls.listCallsOfAccount({ accountId: account.id, status: status ?? null, limit });
  // Only the account's agency (or the agency itself) can have placed a call listed for it; its name is part of such
  // a call, so it is read whoever lists the client's calls.
  const agencyId = account.agencyId ?? account.id;
  const agency = calls.some((c) => c.listedForAccountId)
    ? agencyId === account.id
      ? account
      : await storage.accounts.findAccountById(agencyId)
    : null;
  return {
    calls: calls.map((call) => ({
      ...operatorView(call),
      ...(call.listedForAccountId
        ? {
            account_id: call.accountId,
            listed_for_account_id: call.listedForAccountId,
            triggered_by: `${agency?.name ?? call.accountId} (agency key)`,
          }
        : {}),
    })),
  };
}

/**
 * The public view with the metadata's text as the client wrote it (RawJson: callctl writes it as is), so that its
 * key order survives, integer-like keys included.
 */
function operatorView(call: CallWithMetadataText) {
  return { ...callView({ ...call, metadata: null }), metadata: new RawJson(call.metadata) };
}

/**
 * The calls of `ids` (canonical uuids) the actor reaches: all of them for the operator and the service; for a user,
 * those of their scope's accounts or listed for one (the dashboard's rule, findCallsInScope).
 */
async function reachedCalls(storage: Storage, ids: string[], actor: Actor): Promise<string[]> {
  const scope = scopeOfActor(actor);
  if (scope === null || ids.length === 0) return ids;
  const reached = new Set((await storage.scoped.findCallsInScope(scope, ids)).map((call) => call.id));
  return ids.filter((id) => reached.has(id));
}

/** One call with its events and deliveries, or an AdminError when there is none the actor reaches. */
export async function showCall(storage: Storage, callId: string, actor: Actor) {
  const [id] = isUuid(callId) ? await reachedCalls(storage, [canonicalUuid(callId)], actor) : [];
  const call = id === undefined ? null : await storage.calls.findCallWithHistory(id);
  if (!call) throw new AdminError(`No call ${callId}`);
  return {
    call: {
      ...operatorView(call),
      account_id: call.accountId,
      from_number: call.fromNumber,
      not_before: call.notBefore.toISOString(),
      expires_at: call.expiresAt.toISOString(),
      dial_attempts: call.dialAttempts,
      // The calling rules' part as stored (the payload's consent and compliance, and why a waiting call is held).
      recipient_region: call.recipientRegion,
      consent: call.consent ?? null,
      compliance: call.compliance ?? [],
      held_by: call.heldBy,
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

/**
 * What cancelling did to one call: `canceled` (it was waiting; now failed with reason canceled), `already_canceled`
 * (nothing to do), `too_late` (it is dialling, in progress or finished otherwise: `status` says which), `not_found`.
 */
export type CancelResult = 'canceled' | 'already_canceled' | 'too_late' | 'not_found';

export interface CancelOutcome {
  call_id: string;
  result: CancelResult;
  /** The call's status after the attempt (null when there is no such call). */
  status: CallStatus | null;
}

/**
 * Cancels the calls of `callIds` that are still waiting (status initiated: for a slot, its window, or the next attempt
 * of a retried call): each ends failed with reason `canceled`, its call.failed event goes to the outbox, and the
 * account's audit log records who did it, all in one transaction. The decision is taken under the calls' row locks,
 * the lock the dispatcher's claim holds while it moves a call to dialing: a call claimed meanwhile is found dialling
 * and left alone. A call the actor does not reach (another tenant's) is `not_found`, as a missing one, and left alone.
 */
export async function cancelCalls(
  storage: Storage,
  callIds: string[],
  actor: Actor,
  now: Date,
): Promise<CancelOutcome[]> {
  const ids = await reachedCalls(storage, [...new Set(callIds.filter(isUuid).map(canonicalUuid))], actor);
  const found = new Map<string, { status: CallStatus; reason: string | null; accountId: string }>();
  const applied =
    ids.length === 0
      ? []
      : await transitionCalls(
          storage,
          { kind: 'ids', ids },
          (call) => {
            found.set(call.id, { status: call.status, reason: call.failureReason, accountId: call.accountId });
            return call.status === 'initiated' ? { update: { kind: 'failed', reason: 'canceled' } } : null;
          },
          {
            now,
            source: actor.kind === 'user' ? 'dashboard' : actor.kind,
            audit: {
              actorKind: actor.kind,
              actorUserId: actor.kind === 'user' ? actor.userId : null,
              ip: actor.kind === 'user' ? actor.ip : null,
              action: 'call_canceled' satisfies AuditAction,
            },
          },
        );
  const canceled = new Set(applied.filter((a) => a.steps.length > 0).map((a) => a.call.id));
  return callIds.map((given) => {
    const id = isUuid(given) ? canonicalUuid(given) : given;
    const call = found.get(id);
    if (!call) return { call_id: given, result: 'not_found', status: null };
    if (canceled.has(id)) return { call_id: id, result: 'canceled', status: 'failed' };
    const result = call.status === 'failed' && call.reason === 'canceled' ? 'already_canceled' : 'too_late';
    return { call_id: id, result, status: call.status };
  });
}

/** callctl's cancel of one call: the call as it now is, or an AdminError saying why it cannot be canceled. */
export async function cancelCall(storage: Storage, callId: string, actor: Actor, now: Date) {
  const [outcome] = await cancelCalls(storage, [callId], actor, now);
  if (!outcome || outcome.result === 'not_found') throw new AdminError(`No call ${callId}`);
  if (outcome.result === 'too_late') throw new AdminError(cannotCancel(outcome.call_id, outcome.status!));
  return {
    call_id: outcome.call_id,
    status: outcome.status,
    failure_reason: 'canceled',
    already_canceled: outcome.result === 'already_canceled',
  };
}

/** Why a call that no longer waits cannot be canceled, in callctl's words. */
export function cannotCancel(callId: string, status: CallStatus): string {
  return status === 'dialing' || status === 'in_progress'
    ? `Call ${callId} is already ${status === 'dialing' ? 'dialling' : 'in progress'}: only a call that is still waiting can be canceled`
    : `Call ${callId} has already ended (${status}): only a call that is still waiting can be canceled`;
}
