// Applies lifecycle updates to stored calls: row locks, the pure state machine, the call's times, one call event per
// step, and the webhook outbox, all in one transaction. Duplicated or out-of-order updates change nothing.
//
// Set-based: a batch of calls (the dispatcher's claim, the simulated dialer's advance, the expiry sweep) costs the
// same four round trips as a single call: BEGIN, the locking SELECT, one write statement (storage/calls.ts), COMMIT.
import type pg from 'pg';
import type { Call, PrismaClient } from '../generated/prisma/client.js';
import { plan, type CallUpdate, type Transition } from '../domain/call-lifecycle.js';
import { newRowId } from '../domain/ids.js';
import { RawJson, stringifyWithRaw } from '../domain/raw-json.js';
import { callView } from '../../schemas/call.js';
import type { WebhookEvent } from '../../schemas/webhook.js';
import {
  LOCK_CALLS,
  writeCallBatch,
  type CallBatchDelivery,
  type CallBatchEvent,
  type DeliveryLease,
} from '../storage/calls.js';
import type { ClaimedDelivery } from '../storage/deliveries.js';
import { sqlPool } from '../storage/database.js';
import { inTransaction } from '../storage/transaction.js';

export interface UpdateContext {
  now: Date;
  /** Who reports it: dispatcher, provider, expiry, operator. */
  source: string;
}

/** Fields written together with the last step of an update (and only when the update changes something). */
export type CallExtra = Partial<Pick<Call, 'leaseOwner' | 'leaseExpiresAt' | 'providerCallId'>>;

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

function fieldsFor(call: Call, step: Transition, update: CallUpdate, now: Date): Partial<Call> {
  switch (step.to) {
    case 'dialing':
      return { status: 'dialing', startedAt: now };
    case 'in_progress':
      return { status: 'in_progress', answeredAt: now };
    case 'completed': {
      const reported = update.kind === 'completed' ? update.durationSeconds : undefined;
      return {
        status: 'completed',
        endedAt: now,
        durationSeconds: reported ?? seconds(call.answeredAt ?? now, now),
        leaseOwner: null,
        leaseExpiresAt: null,
      };
    }
    case 'failed':
      return {
        status: 'failed',
        failureReason: step.failureReason,
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
 * Within a transaction on `client` that holds the row locks of `calls` (as read under them). Returns, per call in
 * the order given, the steps taken and the call as it is now (`applied`). A call may appear more than once: its
 * changes apply in order. With a `lease`, the deliveries of its event type are written leased, for the caller's
 * worker to send once the transaction commits (`leased`), and the webhook workers are not NOTIFYed of them: they
 * would only wake to find them leased.
 */
export async function applyLockedBatch(
  client: pg.ClientBase,
  items: { call: Call; change: CallChange }[],
  context: UpdateContext & { lease?: DeliveryLease | undefined },
): Promise<{ applied: AppliedUpdate[]; leased: ClaimedDelivery[] }> {
  const { now, source } = context;
  const updatedAt = new Date();
  const current = new Map<string, Call>();
  const events: CallBatchEvent[] = [];
  const deliveries: CallBatchDelivery[] = [];
  const freed = new Set<string>();
  const results: AppliedUpdate[] = [];

  for (const { call: locked, change } of items) {
    let call = current.get(locked.id) ?? locked;
    const at = change.at ?? now;
    const steps = plan(call.status, change.update);
    for (const [i, step] of steps.entries()) {
      call = {
        ...call,
        ...fieldsFor(call, step, change.update, at),
        ...(i === steps.length - 1 ? change.extra : {}),
        updatedAt,
      };
      const eventId = newRowId();
      events.push({ id: eventId, callId: call.id, step, at });
      if (step.event) {
        const data = { ...callView(call), metadata: new RawJson(call.metadata as string) };
        const body = { type: step.event, timestamp: at.toISOString(), data } satisfies Omit<WebhookEvent, 'data'> & {
          data: { metadata: RawJson };
        };
        deliveries.push({
          id: newRowId(),
          accountId: call.accountId,
          callId: call.id,
          eventId,
          type: step.event,
          payload: stringifyWithRaw(body),
        });
      }
      // A slot is free: wake the dispatchers.
      if (step.to === 'completed' || step.to === 'failed') freed.add(call.accountId);
    }
    if (steps.length > 0) current.set(call.id, call);
    results.push({ steps, call });
  }
  if (current.size === 0) return { applied: results, leased: [] };

  const leased = await writeCallBatch(client, {
    calls: [...current.values()],
    events,
    deliveries,
    freedAccounts: [...freed],
    source,
    now,
    lease: context.lease,
  });
  return { applied: results, leased };
}

/**
 * Locks the calls `select` returns (its text must select CALL_COLUMNS `FROM calls c` ... `FOR UPDATE`, ordered by id
 * so that concurrent batches take their locks in one order), asks `changeFor` what happens to each, and applies it.
 */
export async function transitionCalls(
  prisma: PrismaClient,
  select: { name?: string | undefined; text: string; values: unknown[] },
  changeFor: (call: Call) => CallChange | null,
  context: UpdateContext,
): Promise<AppliedUpdate[]> {
  return inTransaction(sqlPool(prisma), async (client) => {
    const { rows } = await client.query<Call>(select);
    const items = rows.flatMap((call) => {
      const change = changeFor(call);
      return change ? [{ call, change }] : [];
    });
    return (await applyLockedBatch(client, items, context)).applied;
  });
}

/** Applies one update to each of the given calls (waiting for their locks); calls that do not exist are skipped. */
async function applyCallUpdates(
  prisma: PrismaClient,
  callIds: string[],
  change: CallChange,
  context: UpdateContext,
): Promise<AppliedUpdate[]> {
  if (callIds.length === 0) return [];
  return transitionCalls(prisma, { ...LOCK_CALLS, values: [callIds] }, () => change, context);
}

/** Applies one update to one call. `call` is null when there is no such call. */
export async function applyCallUpdate(
  prisma: PrismaClient,
  callId: string,
  update: CallUpdate,
  context: UpdateContext,
  extra: CallExtra = {},
) {
  const [applied] = await applyCallUpdates(prisma, [callId], { update, extra }, context);
  return applied ?? { steps: [] as Transition[], call: null };
}
