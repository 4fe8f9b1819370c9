// Applies lifecycle updates to stored calls: row locks, the pure state machine, the call's times, one call event per
// step, and the webhook outbox, all in one transaction. Duplicated or out-of-order updates change nothing.
//
// Attempts: the step that ends a dialled attempt appends {attempt, outcome, at} to attempt_outcomes (completed too).
// A failure the agent's retry policy retries (read under the call's lock, as the policy is when the attempt ends; an
// unreadable policy retries nothing) is a step back to initiated instead: attempt + 1, next_attempt_at = not_before =
// the end + the policy's wait, a new time to live from then, the attempt's own fields cleared, no webhook event. The
// claim then treats it as any waiting call (window, concurrency, queue, FIFO by created_at: a retried call keeps its
// place by age, so it goes before calls accepted after it once its time comes).
//
// Set-based: a batch of calls (the dispatcher's claim, the simulated dialer's advance, the expiry sweep) costs the
// same four round trips as a single call: BEGIN, the locking SELECT, one write statement, COMMIT. The transaction is
// storage's (calls.transition, claims.claimDue); what it writes is planned here, without the database.
import type { AttemptOutcomeData } from '../../schemas/call.js';
import type { CallRow as Call, LockedCall } from '../storage/index.js';
import {
  plan,
  retryPolicySchemaCheck,
  retryWaitMinutes,
  type CallUpdate,
  type RetryPolicy,
  type Transition,
} from '../domain/call-lifecycle.js';
import { newRowId } from '../domain/ids.js';
import { RawJson, stringifyWithRaw } from '../domain/raw-json.js';
import { callView } from './call-view.js';
import { awaitsResult } from './runtime-result.js';
import type { WebhookEvent } from '../../schemas/webhook.js';
import {
  type CallBatch,
  type CallBatchAudit,
  type CallBatchDelivery,
  type CallBatchEvent,
  type CallsToLock,
  type DeliveryLease,
  type Storage,
} from '../storage/index.js';

export interface UpdateContext {
  now: Date;
  /** Who reports it: dispatcher, provider, expiry, operator. */
  source: string;
  /**
   * A retried call's time to live, counted from its next attempt (QUEUED_CALL_TTL_HOURS, plugins/concurrency.ts).
   * Whoever reports the end of an attempt passes it; without it, the configuration's default (24 h).
   */
  queuedCallTtlMs?: number | undefined;
  /**
   * How long an answered call's terminal event waits for the runtime's result (AGENT_RESULT_WAIT_SECONDS): written
   * due this long after the call ended unless the result is in already. Absent or 0: sent at once (a dialer that
   * hands calls to no runtime, such as the simulated one, passes none).
   */
  resultWaitMs?: number | undefined;
  /** An operator's change: each call it changes gets this audit entry (detail: its call_id), in the same transaction. */
  audit?: Omit<CallBatchAudit, 'id' | 'accountId' | 'detail' | 'at'> | undefined;
}

/** QUEUED_CALL_TTL_HOURS' default (src/config.ts), for a context that does not say. */
const DEFAULT_QUEUED_CALL_TTL_MS = 24 * 3600_000;

/**
 * Fields written together with the last step of an update (and only when the update changes something). Never with
 * a retry: they describe the attempt that ended, and the row now describes the next one.
 */
export type CallExtra = Partial<
  Pick<Call, 'leaseOwner' | 'leaseExpiresAt' | 'providerCallId' | 'answeredBy' | 'voicemailLeft'>
>;

export interface CallChange {
  update: CallUpdate;
  extra?: CallExtra;
  /** When it happened, if not the context's `now` (the simulated dialer's scripted times). */
  at?: Date;
}

export interface AppliedUpdate {
  steps: Transition[];
  call: Call;
}

const seconds = (from: Date, to: Date) => Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));

/** The attempt outcomes with the one `step` ends, if it ends one. */
function outcomesAfter(call: Call, step: Transition, at: Date): Pick<Call, 'attemptOutcomes'> | object {
  if (!step.attemptOutcome) return {};
  const finished = (Array.isArray(call.attemptOutcomes) ? call.attemptOutcomes : []) as AttemptOutcomeData[];
  const entry: AttemptOutcomeData = { attempt: call.attempt, outcome: step.attemptOutcome, at: at.toISOString() };
  return { attemptOutcomes: [...finished, entry] };
}

interface Retrying {
  policy: RetryPolicy | null;
  ttlMs: number;
}

function fieldsFor(call: Call, step: Transition, update: CallUpdate, now: Date, retrying: Retrying): Partial<Call> {
  switch (step.to) {
    case 'initiated': {
      // A retry (plan() only goes back to initiated under a policy): the next attempt's time, and a clean attempt.
      const next = new Date(now.getTime() + retryWaitMinutes(retrying.policy!, call.attempt) * 60_000);
      return {
        ...outcomesAfter(call, step, now),
        status: 'initiated',
        failureReason: null,
        attempt: call.attempt + 1,
        nextAttemptAt: next,
        notBefore: next,
        expiresAt: new Date(next.getTime() + retrying.ttlMs),
        startedAt: null,
        answeredAt: null,
        endedAt: null,
        durationSeconds: null,
        providerCallId: null,
        answeredBy: null,
        voicemailLeft: null,
        leaseOwner: null,
        leaseExpiresAt: null,
      };
    }
    case 'dialing':
      return { status: 'dialing', startedAt: now, nextAttemptAt: null };
    case 'in_progress':
      return { status: 'in_progress', answeredAt: now };
    case 'completed': {
      const reported = update.kind === 'completed' ? update.durationSeconds : undefined;
      return {
        ...outcomesAfter(call, step, now),
        status: 'completed',
        endedAt: now,
        durationSeconds: reported ?? seconds(call.answeredAt ?? now, now),
        leaseOwner: null,
        leaseExpiresAt: null,
      };
    }
    case 'failed':
      return {
        ...outcomesAfter(call, step, now),
        status: 'failed',
        failureReason: step.failureReason,
        nextAttemptAt: null,
        endedAt: now,
        durationSeconds: call.answeredAt ? seconds(call.answeredAt, now) : null,
        leaseOwner: null,
        leaseExpiresAt: null,
      };
    default:
      return {};
  }
}

/**
 * Plans the changes of calls read under their row locks: per call in the order given, the steps taken and the call as
 * it is now (`applied`), and the one write that records them (`batch`, null when nothing changes). A call may appear
 * more than once: its changes apply in order. With a `lease`, the deliveries of its event type are written leased,
 * for the caller's worker to send once the transaction commits, and the webhook workers are not NOTIFYed of them:
 * they would only wake to find them leased.
 */
export function planCallBatch(
  items: { call: Call; change: CallChange }[],
  context: UpdateContext & { lease?: DeliveryLease | undefined },
): { applied: AppliedUpdate[]; batch: CallBatch | null } {
  const { now, source } = context;
  const ttlMs = context.queuedCallTtlMs ?? DEFAULT_QUEUED_CALL_TTL_MS;
  const policies = new Map<string, RetryPolicy | null>();
  // The row's write time by the same clock as its changes (the caller's, injected in tests), not the wall clock.
  const updatedAt = now;
  const current = new Map<string, Call>();
  const events: CallBatchEvent[] = [];
  const deliveries: CallBatchDelivery[] = [];
  const freed = new Set<string>();
  const audit: CallBatchAudit[] = [];
  const results: AppliedUpdate[] = [];

  for (const { call: locked, change } of items) {
    const { retryPolicy, ...row } = locked as LockedCall;
    if (!policies.has(row.id)) policies.set(row.id, readPolicy(retryPolicy));
    const policy = policies.get(row.id)!;
    let call = current.get(row.id) ?? row;
    const at = change.at ?? now;
    const steps = plan(call.status, change.update, { attempt: call.attempt, policy });
    for (const [i, step] of steps.entries()) {
      const last = i === steps.length - 1 && step.to !== 'initiated';
      call = {
        ...call,
        ...fieldsFor(call, step, change.update, at, { policy, ttlMs }),
        ...(last ? change.extra : {}),
        updatedAt,
      };
      const eventId = newRowId();
      events.push({ id: eventId, callId: call.id, step, at });
      if (step.event) {
        // The stored texts go into the body as written: the client's metadata and the runtime's result keep their
        // key order.
        const { result } = call as LockedCall;
        const data = {
          ...callView(call),
          metadata: new RawJson(call.metadata as string),
          result: typeof result === 'string' ? new RawJson(result) : null,
        };
        const body = { type: step.event, timestamp: at.toISOString(), data } satisfies Omit<WebhookEvent, 'data'> & {
          data: { metadata: RawJson; result: RawJson | null };
        };
        deliveries.push({
          id: newRowId(),
          accountId: call.accountId,
          callId: call.id,
          eventId,
          type: step.event,
          payload: stringifyWithRaw(body),
          notBefore: awaitsResult(call, step, context.resultWaitMs)
            ? new Date(at.getTime() + context.resultWaitMs!)
            : null,
        });
      }
      // A slot is free (and, after a retry, a call waits): wake the dispatchers.
      if (step.to === 'completed' || step.to === 'failed' || step.to === 'initiated') freed.add(call.accountId);
    }
    if (steps.length > 0) {
      if (context.audit && !current.has(call.id))
        audit.push({
          ...context.audit,
          id: newRowId(),
          accountId: call.accountId,
          detail: { call_id: call.id },
          at: now,
        });
      current.set(call.id, call);
    }
    results.push({ steps, call });
  }
  if (current.size === 0) return { applied: results, batch: null };
  return {
    applied: results,
    batch: {
      calls: [...current.values()],
      events,
      deliveries,
      freedAccounts: [...freed],
      source,
      now,
      lease: context.lease,
      audit,
    },
  };
}

/**
 * The retry policy read with a locked call, checked; null (no retry) when the locking read did not join it (a claim's
 * candidates: they only start attempts) or when the stored policy does not validate (edited by hand).
 */
function readPolicy(stored: LockedCall['retryPolicy']): RetryPolicy | null {
  if (!stored) return null;
  try {
    return retryPolicySchemaCheck(stored);
  } catch {
    return null;
  }
}

/** Locks `calls` (storage says which), asks `changeFor` what happens to each, and applies it. */
export async function transitionCalls(
  storage: Storage,
  calls: CallsToLock,
  changeFor: (call: Call) => CallChange | null,
  context: UpdateContext,
): Promise<AppliedUpdate[]> {
  const { result } = await storage.calls.transition(calls, (rows) => {
    const items = rows.flatMap((call) => {
      const change = changeFor(call);
      return change ? [{ call, change }] : [];
    });
    const { applied, batch } = planCallBatch(items, context);
    return { batch, result: applied };
  });
  return result;
}

/** Applies one update to each of the given calls (waiting for their locks); calls that do not exist are skipped. */
async function applyCallUpdates(
  storage: Storage,
  callIds: string[],
  change: CallChange,
  context: UpdateContext,
): Promise<AppliedUpdate[]> {
  if (callIds.length === 0) return [];
  return transitionCalls(storage, { kind: 'ids', ids: callIds }, () => change, context);
}

/** Applies one update to one call. `call` is null when there is no such call. */
export async function applyCallUpdate(
  storage: Storage,
  callId: string,
  update: CallUpdate,
  context: UpdateContext,
  extra: CallExtra = {},
) {
  const [applied] = await applyCallUpdates(storage, [callId], { update, extra }, context);
  return applied ?? { steps: [] as Transition[], call: null };
}
