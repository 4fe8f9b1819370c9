// Applies lifecycle updates to stored calls: row locks, the pure state machine, the call's times, one call event per
// step, and the webhook outbox, all in one transaction. Duplicated or out-of-order updates change nothing.
//
// Set-based: a batch of calls (the dispatcher's claim, the simulated dialer's advance, the expiry sweep) costs the
// same four round trips as a single call: BEGIN, the locking SELECT, one write statement (calls, events,
// deliveries, notifications together), COMMIT. Plain pg statements, prepared once per connection, on the pool under
// Prisma: per call, the Prisma version sent about nine statements and spent most of the dispatcher's CPU in the client.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Call, PrismaClient } from '../generated/prisma/client.js';
import { plan, type CallUpdate, type Transition } from '../domain/call-lifecycle.js';
import { callView } from '../schemas/call.js';
import type { WebhookEvent } from '../schemas/webhook.js';
import { sqlPool } from '../storage/database.js';
import { WEBHOOKS_CHANNEL } from '../webhooks/delivery-worker.js';
import { CALLS_CHANNEL } from './accept-call.js';

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
}

export interface AppliedUpdate {
  steps: Transition[];
  call: Call;
}

/** Every column of calls under the names of Prisma's Call model, for `FROM calls c`. */
export const CALL_COLUMNS = `c.id, c.account_id AS "accountId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber",
  c.from_number AS "fromNumber", c.name, c.email, c.metadata, c.status::text AS status, c.failure_reason::text AS "failureReason",
  c.not_before AS "notBefore", c.expires_at AS "expiresAt", c.created_at AS "createdAt", c.updated_at AS "updatedAt",
  c.started_at AS "startedAt", c.answered_at AS "answeredAt", c.ended_at AS "endedAt", c.duration_seconds AS "durationSeconds",
  c.provider_call_id AS "providerCallId", c.dial_attempts AS "dialAttempts", c.lease_owner AS "leaseOwner",
  c.lease_expires_at AS "leaseExpiresAt"`;

const seconds = (from: Date, to: Date) => Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));

function fieldsFor(call: Call, step: Transition, update: CallUpdate, now: Date): Partial<Call> {
  switch (step.to) {
    case 'dialing':
      return { status: 'dialing', startedAt: now };
    case 'in_progress':
      return { status: 'in_progress', answeredAt: now };
    case 'completed': {
      const reported = update.kind === 'completed' ? update.durationSeconds : undefined;
      return { status: 'completed', endedAt: now, durationSeconds: reported ?? seconds(call.answeredAt ?? now, now), leaseOwner: null, leaseExpiresAt: null };
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
 * One statement writes a batch: each call's final row, every step's event, the deliveries of the events the
 * account's enabled endpoint should hear (their bodies frozen here), and the notifications (webhook workers; the
 * dispatchers when a slot freed). NOTIFY is transactional: delivered on commit.
 */
const WRITE_BATCH = `
WITH calls_written AS (
  UPDATE calls c SET status = u.status::call_status, failure_reason = u.failure_reason::failure_reason,
         started_at = u.started_at, answered_at = u.answered_at, ended_at = u.ended_at, duration_seconds = u.duration_seconds,
         provider_call_id = u.provider_call_id, lease_owner = u.lease_owner, lease_expires_at = u.lease_expires_at,
         updated_at = u.updated_at
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::int[],
                $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[])
         AS u(id, status, failure_reason, started_at, answered_at, ended_at, duration_seconds, provider_call_id, lease_owner,
              lease_expires_at, updated_at)
   WHERE c.id = u.id
), events_written AS (
  INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
  SELECT e.id, e.call_id, e.from_status::call_status, e.to_status::call_status, e.failure_reason::failure_reason, $12::text, $13::timestamptz
    FROM unnest($14::uuid[], $15::uuid[], $16::text[], $17::text[], $18::text[]) AS e(id, call_id, from_status, to_status, failure_reason)
), deliveries_written AS (
  INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at)
  SELECT d.id, w.id, d.call_id, d.event_id, d.event_type, d.payload, $13::timestamptz
    FROM unnest($19::uuid[], $20::uuid[], $21::uuid[], $22::uuid[], $23::text[], $24::text[])
         AS d(id, account_id, call_id, event_id, event_type, payload)
    JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.enabled
  RETURNING endpoint_id
)
SELECT pg_notify($25::text, endpoint_id::text) FROM (SELECT DISTINCT endpoint_id FROM deliveries_written) AS endpoints
UNION ALL
SELECT pg_notify($26::text, account_id::text) FROM unnest($27::uuid[]) AS freed(account_id)`;

/**
 * Within a transaction on `client` that holds the row locks of `calls` (as read under them). Returns, per call in
 * the order given, the steps taken and the call as it is now. A call may appear more than once: its changes apply
 * in order.
 */
export async function applyLockedBatch(client: pg.ClientBase, items: { call: Call; change: CallChange }[], context: UpdateContext): Promise<AppliedUpdate[]> {
  const { now, source } = context;
  const updatedAt = new Date();
  const current = new Map<string, Call>();
  const events: { id: string; callId: string; step: Transition }[] = [];
  const deliveries: { id: string; accountId: string; callId: string; eventId: string; type: string; payload: string }[] = [];
  const freed = new Set<string>();
  const results: AppliedUpdate[] = [];

  for (const { call: locked, change } of items) {
    let call = current.get(locked.id) ?? locked;
    const steps = plan(call.status, change.update);
    for (const [i, step] of steps.entries()) {
      call = { ...call, ...fieldsFor(call, step, change.update, now), ...(i === steps.length - 1 ? change.extra : {}), updatedAt };
      const eventId = randomUUID();
      events.push({ id: eventId, callId: call.id, step });
      if (step.event) {
        const body = { type: step.event, timestamp: now.toISOString(), data: callView(call) } as WebhookEvent;
        deliveries.push({ id: randomUUID(), accountId: call.accountId, callId: call.id, eventId, type: step.event, payload: JSON.stringify(body) });
      }
      // A slot is free: wake the dispatchers.
      if (step.to === 'completed' || step.to === 'failed') freed.add(call.accountId);
    }
    if (steps.length > 0) current.set(call.id, call);
    results.push({ steps, call });
  }
  if (current.size === 0) return results;

  const rows = [...current.values()];
  const column = <T>(pick: (call: Call) => T) => rows.map(pick);
  await client.query({
    name: 'oct_transition_batch',
    text: WRITE_BATCH,
    values: [
      column((c) => c.id), column((c) => c.status), column((c) => c.failureReason), column((c) => c.startedAt),
      column((c) => c.answeredAt), column((c) => c.endedAt), column((c) => c.durationSeconds), column((c) => c.providerCallId),
      column((c) => c.leaseOwner), column((c) => c.leaseExpiresAt), column((c) => c.updatedAt),
      source, now,
      events.map((e) => e.id), events.map((e) => e.callId), events.map((e) => e.step.from), events.map((e) => e.step.to),
      events.map((e) => e.step.failureReason),
      deliveries.map((d) => d.id), deliveries.map((d) => d.accountId), deliveries.map((d) => d.callId), deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.type), deliveries.map((d) => d.payload),
      WEBHOOKS_CHANNEL, CALLS_CHANNEL, [...freed],
    ],
  });
  return results;
}

/** Runs `work` in a transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => { broken = true; });
    throw error;
  } finally {
    // A connection that could not even roll back is not given to anyone else.
    client.release(broken);
  }
}

/**
 * Locks the calls `select` returns (its text must select CALL_COLUMNS `FROM calls c` ... `FOR UPDATE`, ordered by id
 * so that concurrent batches take their locks in one order), asks `changeFor` what happens to each, and applies it.
 */
export async function transitionCalls(
  prisma: PrismaClient,
  select: { name: string; text: string; values: unknown[] },
  changeFor: (call: Call) => CallChange | null,
  context: UpdateContext,
): Promise<AppliedUpdate[]> {
  return inTransaction(sqlPool(prisma), async (client) => {
    const { rows } = await client.query<Call>(select);
    const items = rows.flatMap((call) => {
      const change = changeFor(call);
      return change ? [{ call, change }] : [];
    });
    return applyLockedBatch(client, items, context);
  });
}

const LOCK_CALLS = `SELECT ${CALL_COLUMNS} FROM calls c WHERE c.id = ANY($1::uuid[]) ORDER BY c.id FOR UPDATE`;

/** Applies one update to each of the given calls (waiting for their locks); calls that do not exist are skipped. */
async function applyCallUpdates(prisma: PrismaClient, callIds: string[], change: CallChange, context: UpdateContext): Promise<AppliedUpdate[]> {
  if (callIds.length === 0) return [];
  return transitionCalls(prisma, { name: 'oct_lock_calls', text: LOCK_CALLS, values: [callIds] }, () => change, context);
}

/** Applies one update to one call. `call` is null when there is no such call. */
export async function applyCallUpdate(prisma: PrismaClient, callId: string, update: CallUpdate, context: UpdateContext, extra: CallExtra = {}) {
  const [applied] = await applyCallUpdates(prisma, [callId], { update, extra }, context);
  return applied ?? { steps: [] as Transition[], call: null };
}
