// The calls and call_events tables: acceptance (one statement for every trigger), the counts of an account's live
// calls, the transition batch write, the simulated dialer's advance, and the reads of callbacks and operators.
import type pg from 'pg';
import { ACTIVE_STATUSES, type CallStatus, type LIVE_STATUSES, type TimezoneSource } from '../../schemas/vocabulary.js';
import type { AnsweredBy } from '../../schemas/vocabulary.js';

type LiveStatus = (typeof LIVE_STATUSES)[number];
import type { Call, Prisma } from '../generated/prisma/client.js';
import type { AuditActor } from '../generated/prisma/enums.js';
import type { Transition } from '../domain/call-lifecycle.js';
import { CALLS_CHANNEL, WEBHOOKS_CHANNEL } from './channels.js';
import { heldReason } from './deliveries.js';
import type { ClaimedDelivery } from './delivery-work.js';
import { statement } from './statements.js';
import { PoolRepository } from './driver.js';
import { againIfDeadlocked, inTransaction } from './transaction.js';

export interface AcceptedCallRow {
  accountId: string;
  /** The account's agency (the account itself for an agency): its do-not-call list covers the account too. */
  agencyId: string;
  callId: string;
  eventId: string;
  agentId: string;
  phoneNumber: string;
  fromNumber: string;
  name: string | null;
  email: string | null;
  /** The metadata's JSON text as the client wrote it (stored in a `json` column, so key order is kept). */
  metadataJson: string;
  notBefore: Date;
  expiresAt: Date;
  now: Date;
  maxWaiting: number;
  /** The trigger's scheduled_at, if it gave one. */
  scheduledAt: Date | null;
  /** The zone the calling window is read in for this call, and where it came from. */
  timezone: string;
  timezoneSource: TimezoneSource;
  /** The Idempotency-Key reservation this acceptance answers, with the response it stores. */
  idempotency: { recordId: string; status: number; body: unknown } | null;
  /**
   * The agent's account when it is not `accountId` (an agency's key on a client's agent): the call is listed for it
   * too, and its do-not-call list applies. Null otherwise.
   */
  listedForAccountId: string | null;
}

// Hand-written: the function (migration 20261201160000) checks the do-not-call lists (the account's, its agency's and
// the listed client's), takes the account's row lock and writes call, event and idempotency response in one round trip; Prisma would need an interactive transaction of four. The casts pin the
// one overload whatever types the driver gives the parameters.
const ACCEPT_CALL = statement(
  'oct_accept_call_v3',
  `SELECT oct_accept_call_v3($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, $6::text, $7::text, $8::text, $9::text,
  $10::json, $11::timestamptz, $12::timestamptz, $13::timestamptz, $14::timestamptz, $15::int, $16::uuid, $17::int, $18::jsonb,
  $19::timestamptz, $20::text, $21::timezone_source, $22::uuid) AS waiting`,
);

/** What storing an accepted call came to: stored, refused for a full queue (with its count), or a listed number. */
export type AcceptOutcome = { kind: 'stored' } | { kind: 'queue_full'; waiting: number } | { kind: 'do_not_call' };

export interface LiveCallCounts {
  /** Dialling or connected: what the concurrency limit bounds. */
  active: number;
  /** Accepted and not yet dialled (for a window or a slot). */
  waiting: number;
  /** Of those waiting, how many wait for their agent's calling window to open. */
  waitingForWindow: number;
  /** Of those waiting, how many wait for the time their trigger's scheduled_at asked for. */
  scheduled: number;
  /** Of those waiting, how many wait for their next attempt (an earlier one was busy, unanswered or a voicemail). */
  waitingForRetry: number;
}

/**
 * The active statuses written into a statement, `'dialing', 'in_progress'`: a condition on them matches the partial
 * index calls_active_by_account (status IN those) in a generic plan too. As a parameter (status = ANY($n)), the
 * generic plan a prepared statement settles on after five runs reads every call of the account through another
 * index and filters them.
 */
export const ACTIVE_STATUSES_SQL = ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ');

// Hand-written: the active calls of all the accounts counted in one scan of calls_active_by_account (at most the
// concurrency limit per account), the waiting count read from the counter the triggers keep. The waiting breakdown
// depends on the time, so no counter holds it, and counting every waiting call grew with the queue: each waiting call
// is in one of two partial indexes (migrations 20261128200000-01); the scheduled and retry-waiting ones are counted
// from theirs, of the plain ones only those due (not_before <= now, a range of the other), and the rest of the counter
// waits for its window. Exact as the counter is (acceptance trusts it). An account with nothing active or waiting is
// left out, its breakdown not read: an agency's Overview of a thousand quiet clients read and returned a row of zeros
// for each (3.3 -> 2.5 ms for 1,001 quiet accounts). The accounts are read one primary-key probe each (the LIMIT keeps
// the planner from joining them another way): given the 51 accounts an Overview shows, a plan of `id = ANY($1)` read
// every account of a 5,000-account table.
const LIVE_COUNTS = statement(
  'oct_live_call_counts',
  `
  WITH active AS (
    SELECT c.account_id, count(*)::int AS calls FROM calls c
     WHERE c.account_id = ANY($1::uuid[]) AND c.status IN (${ACTIVE_STATUSES_SQL}) GROUP BY c.account_id)
  SELECT a.id AS account_id, a.waiting_calls AS waiting, coalesce(act.calls, 0) AS active,
         (a.waiting_calls - sr.calls - p.due + sr.waiting_for_window)::int AS waiting_for_window, sr.scheduled,
         sr.waiting_for_retry
    FROM unnest($1::uuid[]) AS u(id)
   CROSS JOIN LATERAL (SELECT x.id, x.waiting_calls FROM accounts x WHERE x.id = u.id LIMIT 1) AS a
   CROSS JOIN LATERAL (
     SELECT count(*) AS calls,
            count(*) FILTER (WHERE c.next_attempt_at IS NULL AND c.not_before > $2::timestamptz
                               AND c.scheduled_at <= $2::timestamptz) AS waiting_for_window,
            count(*) FILTER (WHERE c.next_attempt_at IS NULL AND c.scheduled_at > $2::timestamptz)::int AS scheduled,
            count(*) FILTER (WHERE c.next_attempt_at IS NOT NULL)::int AS waiting_for_retry
       FROM calls c
      WHERE a.waiting_calls > 0 AND c.account_id = a.id AND c.status = 'initiated'
        AND (c.next_attempt_at IS NOT NULL OR c.scheduled_at IS NOT NULL)) AS sr
   CROSS JOIN LATERAL (
     SELECT count(*) AS due FROM calls c
      WHERE a.waiting_calls > 0 AND c.account_id = a.id AND c.status = 'initiated' AND c.next_attempt_at IS NULL AND c.scheduled_at IS NULL
        AND c.not_before <= $2::timestamptz) AS p
    LEFT JOIN active act ON act.account_id = a.id
   WHERE a.waiting_calls > 0 OR act.calls IS NOT NULL`,
);

/**
 * Every column of calls under the names of Prisma's Call model, for `FROM calls c`. `metadata` is its JSON text as
 * stored (as the client wrote it): parsed into an object, integer-like keys would move first.
 */
export const CALL_COLUMNS = `c.id, c.account_id AS "accountId", c.agency_id AS "agencyId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber",
  c.from_number AS "fromNumber", c.name, c.email, c.metadata::text AS metadata, c.status::text AS status, c.failure_reason::text AS "failureReason",
  c.not_before AS "notBefore", c.expires_at AS "expiresAt", c.created_at AS "createdAt", c.updated_at AS "updatedAt",
  c.started_at AS "startedAt", c.answered_at AS "answeredAt", c.ended_at AS "endedAt", c.duration_seconds AS "durationSeconds",
  c.provider_call_id AS "providerCallId", c.dial_attempts AS "dialAttempts", c.lease_owner AS "leaseOwner",
  c.lease_expires_at AS "leaseExpiresAt", c.attempt, c.attempt_outcomes AS "attemptOutcomes", c.next_attempt_at AS "nextAttemptAt",
  c.answered_by::text AS "answeredBy", c.voicemail_left AS "voicemailLeft", c.scheduled_at AS "scheduledAt", c.timezone,
  c.timezone_source::text AS "timezoneSource", c.listed_for_account_id AS "listedForAccountId"`;

/**
 * A call as a transition locks it, with its agent's retry policy as stored (unchecked; src/calls/transition.ts checks
 * it): an attempt that ends is retried under the policy as it is then. Absent where the locking read has no need of it.
 */
export type LockedCall = Call & { retryPolicy?: { maxAttempts: unknown; retryOn: unknown; waitsMinutes: unknown } };

/** The agent's retry policy, for `FROM calls c JOIN agents ag ON ag.id = c.agent_id` (locked FOR UPDATE OF c only). */
const RETRY_POLICY = `jsonb_build_object('maxAttempts', ag.max_attempts, 'retryOn', ag.retry_on,
  'waitsMinutes', ag.retry_waits_minutes) AS "retryPolicy"`;

/** Locks the given calls in id order (concurrent batches take their locks in one order); not their agents. */
const LOCK_CALLS = statement(
  'oct_lock_calls',
  `SELECT ${CALL_COLUMNS}, ${RETRY_POLICY} FROM calls c JOIN agents ag ON ag.id = c.agent_id
    WHERE c.id = ANY($1::uuid[]) ORDER BY c.id FOR UPDATE OF c`,
);

/** `at`: when the step happened (the time its event records). */
export interface CallBatchEvent {
  id: string;
  callId: string;
  step: Transition;
  at: Date;
}
export interface CallBatchDelivery {
  id: string;
  accountId: string;
  callId: string;
  eventId: string;
  type: string;
  payload: string;
}

/**
 * One statement writes a batch: each call's final row (every column a transition changes: the attempt's, the retry's
 * schedule, and the answering machine's verdict that CallExtra carries), every step's event, the deliveries of the events the
 * account's endpoint should hear (their bodies frozen here; held, with the reason, while the endpoint is disabled),
 * and the notifications (webhook workers; the dispatchers when a slot freed). NOTIFY is transactional: delivered on
 * commit. The endpoint rows are read FOR KEY SHARE (the lock the deliveries' foreign key takes anyway): an "Enable
 * again" (storage/endpoints.ts) locks the endpoint FOR UPDATE, so it waits for a batch that wrote held deliveries
 * and then releases them, and a batch that starts meanwhile waits and reads the endpoint enabled. Deliveries of the
 * event type `$29` (to an enabled endpoint) are written leased until `$30` and returned (the caller's worker sends
 * them): no NOTIFY for them. The notifications are the preserved side of the final LEFT JOIN, so they are sent whether
 * or not any delivery is leased; the rows are the leased deliveries, or one row of NULLs when there are none.
 */
const WRITE_BATCH = statement(
  'oct_transition_batch',
  `
WITH calls_written AS (
  UPDATE calls c SET status = u.status::call_status, failure_reason = u.failure_reason::failure_reason,
         started_at = u.started_at, answered_at = u.answered_at, ended_at = u.ended_at, duration_seconds = u.duration_seconds,
         provider_call_id = u.provider_call_id, lease_owner = u.lease_owner, lease_expires_at = u.lease_expires_at,
         updated_at = u.updated_at, attempt = u.attempt, attempt_outcomes = u.attempt_outcomes::jsonb,
         next_attempt_at = u.next_attempt_at, not_before = u.not_before, expires_at = u.expires_at,
         answered_by = u.answered_by::answered_by, voicemail_left = u.voicemail_left
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::int[],
                $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[], $31::int[], $32::text[],
                $33::timestamptz[], $34::timestamptz[], $35::timestamptz[], $36::text[], $37::boolean[])
         AS u(id, status, failure_reason, started_at, answered_at, ended_at, duration_seconds, provider_call_id, lease_owner,
              lease_expires_at, updated_at, attempt, attempt_outcomes, next_attempt_at, not_before, expires_at,
              answered_by, voicemail_left)
   WHERE c.id = u.id
), events_written AS (
  INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
  SELECT e.id, e.call_id, e.from_status::call_status, e.to_status::call_status, e.failure_reason::failure_reason, $12::text, e.occurred_at
    FROM unnest($14::uuid[], $15::uuid[], $16::text[], $17::text[], $18::text[], $28::timestamptz[])
         AS e(id, call_id, from_status, to_status, failure_reason, occurred_at)
), endpoints AS MATERIALIZED (
  SELECT w.id, w.account_id, w.enabled, w.disabled_reason FROM webhook_endpoints w WHERE w.account_id = ANY($20::uuid[])
     FOR KEY SHARE
), deliveries_written AS (
  INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at, lease_expires_at, status, held_reason)
  SELECT d.id, w.id, d.call_id, d.event_id, d.event_type, d.payload, $13::timestamptz,
         CASE WHEN d.event_type = $29::text AND w.enabled THEN $30::timestamptz END,
         CASE WHEN w.enabled THEN 'pending' ELSE 'held' END::delivery_status,
         CASE WHEN NOT w.enabled THEN ${heldReason('w.disabled_reason')} END
    FROM unnest($19::uuid[], $20::uuid[], $21::uuid[], $22::uuid[], $23::text[], $24::text[])
         AS d(id, account_id, call_id, event_id, event_type, payload)
    JOIN endpoints w ON w.account_id = d.account_id
  RETURNING id, endpoint_id, payload, attempt_count, lease_expires_at, status
), notified AS (
  SELECT pg_notify($25::text, endpoint_id::text) FROM (
    SELECT DISTINCT endpoint_id FROM deliveries_written WHERE lease_expires_at IS NULL AND status = 'pending') AS endpoints
  UNION ALL
  SELECT pg_notify($26::text, account_id::text) FROM unnest($27::uuid[]) AS freed(account_id)
)
SELECT leased.* FROM (SELECT count(*) FROM notified) AS sent
  LEFT JOIN (SELECT d.id, d.endpoint_id AS "endpointId", d.payload, d.attempt_count AS "attemptCount",
                    w.url, w.secret, w.enabled
               FROM deliveries_written d JOIN webhook_endpoints w ON w.id = d.endpoint_id
              WHERE d.lease_expires_at IS NOT NULL) AS leased ON true`,
);

/** An audit entry written with the batch (an operator's cancel): `detail` names the call. */
export interface CallBatchAudit {
  id: string;
  accountId: string;
  actorKind: AuditActor;
  actorUserId: string | null;
  ip: string | null;
  action: string;
  detail: Record<string, unknown>;
  at: Date;
}

/**
 * A batch of call transitions as planned by src/calls/transition.ts: each call's final row, every step's event, the
 * deliveries, the accounts whose slots were freed, and the audit entries of an operator's change.
 */
export interface CallBatch {
  calls: Call[];
  events: CallBatchEvent[];
  deliveries: CallBatchDelivery[];
  freedAccounts: string[];
  source: string;
  now: Date;
  lease?: DeliveryLease | undefined;
  audit?: CallBatchAudit[] | undefined;
}

/** What a planning callback returns: the batch to write (null: nothing changes) and the caller's result. */
export interface PlannedBatch<T> {
  batch: CallBatch | null;
  result: T;
}

/** Deliveries a batch writes leased to the caller's worker: those of one event type, until a moment. */
export interface DeliveryLease {
  eventType: string;
  until: Date;
}

/**
 * Writes a batch in one statement (hand-written: Prisma would send a statement per row and table): each call's final
 * row, every step's event, the deliveries (to the account's endpoint; held while it is disabled) and the
 * notifications. Returns the deliveries written under `lease`.
 */
export async function writeCallBatch(client: pg.ClientBase, batch: CallBatch): Promise<ClaimedDelivery[]> {
  const { calls: rows, events, deliveries, source, now, lease } = batch;
  const column = <T>(pick: (call: Call) => T) => rows.map(pick);
  const { rows: leased } = await client.query<ClaimedDelivery | { [K in keyof ClaimedDelivery]: null }>({
    ...WRITE_BATCH,
    values: [
      column((c) => c.id),
      column((c) => c.status),
      column((c) => c.failureReason),
      column((c) => c.startedAt),
      column((c) => c.answeredAt),
      column((c) => c.endedAt),
      column((c) => c.durationSeconds),
      column((c) => c.providerCallId),
      column((c) => c.leaseOwner),
      column((c) => c.leaseExpiresAt),
      column((c) => c.updatedAt),
      source,
      now,
      events.map((e) => e.id),
      events.map((e) => e.callId),
      events.map((e) => e.step.from),
      events.map((e) => e.step.to),
      events.map((e) => e.step.failureReason),
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.accountId),
      deliveries.map((d) => d.callId),
      deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.type),
      deliveries.map((d) => d.payload),
      WEBHOOKS_CHANNEL,
      CALLS_CHANNEL,
      batch.freedAccounts,
      events.map((e) => e.at),
      lease?.eventType ?? null,
      lease?.until ?? null,
      column((c) => c.attempt),
      column((c) => JSON.stringify(c.attemptOutcomes ?? [])),
      column((c) => c.nextAttemptAt),
      column((c) => c.notBefore),
      column((c) => c.expiresAt),
      column((c) => c.answeredBy),
      column((c) => c.voicemailLeft),
    ],
  });
  return leased.filter((d): d is ClaimedDelivery => d.id !== null);
}

// Hand-written: in the transition's own pg transaction (Prisma cannot run there), so that an operator's change and its
// audit entry commit together. The agency is the account's own (the account itself for an agency), as audit() does.
const WRITE_AUDIT = statement(
  'oct_transition_audit',
  `
  INSERT INTO audit_log (id, account_id, agency_id, actor_kind, actor_user_id, action, detail, ip, created_at)
  SELECT e.id, a.id, coalesce(a.agency_id, a.id), e.actor_kind::audit_actor, e.actor_user_id, e.action, e.detail::jsonb,
         e.ip, e.created_at
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
         AS e(id, account_id, actor_kind, actor_user_id, action, detail, ip, created_at)
    JOIN accounts a ON a.id = e.account_id`,
);

async function writeAudit(client: pg.ClientBase, entries: CallBatchAudit[]): Promise<void> {
  await client.query({
    ...WRITE_AUDIT,
    values: [
      entries.map((e) => e.id),
      entries.map((e) => e.accountId),
      entries.map((e) => e.actorKind),
      entries.map((e) => e.actorUserId),
      entries.map((e) => e.action),
      entries.map((e) => JSON.stringify(e.detail)),
      entries.map((e) => e.ip),
      entries.map((e) => e.at),
    ],
  });
}

/** A call as read for people: `metadata` is its JSON text as the client wrote it. */
export type CallWithMetadataText = Omit<Call, 'metadata'> & { metadata: string };

// Hand-written: the metadata's text as stored (`json` keeps the client's key order); Prisma Client parses it into an
// object, which moves integer-like keys ("2", "10") first.
const METADATA_TEXTS = statement(
  'oct_call_metadata_texts',
  'SELECT id, metadata::text AS metadata FROM calls WHERE id = ANY($1::uuid[])',
);

async function withMetadataTexts<C extends { id: string }>(
  pool: pg.Pool,
  calls: C[],
): Promise<(C & { metadata: string })[]> {
  if (calls.length === 0) return [];
  const { rows } = await pool.query<{ id: string; metadata: string }>({
    ...METADATA_TEXTS,
    values: [calls.map((c) => c.id)],
  });
  const texts = new Map(rows.map((r) => [r.id, r.metadata]));
  return calls.map((call) => ({ ...call, metadata: texts.get(call.id) ?? '{}' }));
}

/** A call whose scripted ring or talk time is over, with the times its script counts from. */
export interface CallDueToAdvance {
  id: string;
  status: 'dialing' | 'in_progress';
  startedAt: Date;
  answeredAt: Date | null;
}

/** Which calls are due: those of the provider whose ids start with `providerPrefix` that rang or talked long enough. */
export interface AdvanceDue {
  providerPrefix: string;
  rangBefore: Date;
  talkedBefore: Date;
}

const RINGING = 'dialing' satisfies CallStatus;
const TALKING = 'in_progress' satisfies CallStatus;

// Hand-written: the simulated dialer's every pass (a named statement; Prisma cannot compare a column with a prefix
// parameter, nor express the lock below). The statuses are literals, not parameters: a prepared statement's generic
// plan, blind to parameter values, read the whole calls table (test/storage/no-sequential-scans.test.ts).
const DUE_TO_ADVANCE = statement(
  'oct_sim_due',
  `
  SELECT id, status::text AS status, started_at AS "startedAt", answered_at AS "answeredAt" FROM calls
   WHERE (status = '${RINGING}' AND started_at <= $1 OR status = '${TALKING}' AND answered_at <= $2)
     AND starts_with(provider_call_id, $3)
   LIMIT 500`,
);

/** The same calls (with their agents' retry policies), locked in id order; those another process is moving are left to it. */
const LOCK_DUE_TO_ADVANCE = statement(
  'oct_sim_lock_due',
  `
  SELECT ${CALL_COLUMNS}, ${RETRY_POLICY} FROM calls c JOIN agents ag ON ag.id = c.agent_id
   WHERE c.id = ANY($4::uuid[])
     AND (c.status = '${RINGING}' AND c.started_at <= $1 OR c.status = '${TALKING}' AND c.answered_at <= $2)
     AND starts_with(c.provider_call_id, $3)
   ORDER BY c.id FOR UPDATE OF c SKIP LOCKED`,
);

/** Waiting calls past their time to live, locked, unless a claim took them meanwhile ($1 now, $2 the ids). */
const LOCK_EXPIRED = statement(
  'oct_lock_expired',
  `
  SELECT ${CALL_COLUMNS} FROM calls c WHERE c.id = ANY($2::uuid[]) AND c.status = 'initiated' AND c.expires_at <= $1
   ORDER BY c.id FOR UPDATE SKIP LOCKED`,
);

/**
 * Which calls a transition locks: `ids` as they are (waiting for their locks); `expired`, those of `ids` still waiting
 * past their time to live (skipping any a claim holds); `dueToAdvance`, those of `ids` the simulated dialer still has
 * to move (skipping any another process is moving).
 */
export type CallsToLock =
  | { kind: 'ids'; ids: string[] }
  | { kind: 'expired'; ids: string[]; now: Date }
  | { kind: 'dueToAdvance'; ids: string[]; due: AdvanceDue };

function lockingSelect(calls: CallsToLock) {
  switch (calls.kind) {
    case 'ids':
      return { ...LOCK_CALLS, values: [calls.ids] };
    case 'expired':
      return { ...LOCK_EXPIRED, values: [calls.now, calls.ids] };
    case 'dueToAdvance': {
      const { due } = calls;
      return { ...LOCK_DUE_TO_ADVANCE, values: [due.rangBefore, due.talkedBefore, due.providerPrefix, calls.ids] };
    }
  }
}

// Hand-written: the waiting total is the sum of the counters the triggers keep (counting waiting calls would read
// every one of them); active calls are counted on the status index (at most the limit per account).
const LIVE_TOTALS = statement(
  'oct_live_totals',
  `
  SELECT (SELECT coalesce(sum(waiting_calls), 0)::int FROM accounts) AS initiated,
         (SELECT count(*)::int FROM calls WHERE status = 'dialing') AS dialing,
         (SELECT count(*)::int FROM calls WHERE status = 'in_progress') AS in_progress`,
);

export class CallRepository extends PoolRepository {
  /**
   * The transition transaction, in the four round trips of a batch: BEGIN, the locking SELECT of `calls` (in id
   * order, so that concurrent batches take their locks in one order), one write of what `plan` decides for the
   * locked rows (writeCallBatch), COMMIT. A method
   * owning its pg transaction rather than a step of `Storage.transaction`: Prisma's interactive transactions cannot
   * run on a pg client, and this path must not pay Prisma's per-statement cost. A batch with audit entries (an
   * operator's cancel) writes them too, before COMMIT. Returns `plan`'s result and the deliveries written under the
   * batch's lease.
   */
  async transition<T>(
    calls: CallsToLock,
    plan: (locked: LockedCall[]) => PlannedBatch<T>,
  ): Promise<{ result: T; leased: ClaimedDelivery[] }> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<LockedCall>(lockingSelect(calls));
      const { batch, result } = plan(rows);
      const leased = batch ? await writeCallBatch(client, batch) : [];
      if (batch?.audit?.length) await writeAudit(client, batch.audit);
      return { result, leased };
    });
  }

  /**
   * Stores an accepted call unless its number is on the do-not-call list of the account, its agency or the client it
   * is listed for, or the account's queue is full.
   */
  async insertAcceptedCall(row: AcceptedCallRow): Promise<AcceptOutcome> {
    const { idempotency } = row;
    // One statement: a deadlock (an upgrade's DDL under way) undid all of it, so it is sent again.
    const { rows } = await againIfDeadlocked(() =>
      this.pool.query<{ waiting: number }>({
        ...ACCEPT_CALL,
        values: [
          row.accountId,
          row.agencyId,
          row.callId,
          row.eventId,
          row.agentId,
          row.phoneNumber,
          row.fromNumber,
          row.name,
          row.email,
          row.metadataJson,
          row.notBefore,
          row.expiresAt,
          row.now,
          new Date(),
          row.maxWaiting,
          idempotency?.recordId ?? null,
          idempotency?.status ?? null,
          idempotency ? JSON.stringify(idempotency.body) : null,
          row.scheduledAt,
          row.timezone,
          row.timezoneSource,
          row.listedForAccountId,
        ],
      }),
    );
    const waiting = rows[0]!.waiting;
    if (waiting === -2) return { kind: 'do_not_call' };
    return waiting >= 0 ? { kind: 'queue_full', waiting } : { kind: 'stored' };
  }

  /**
   * Live call counts of the accounts given that have a call active or waiting (the others, and accounts that do not
   * exist, are absent: all zeros). An agency of a thousand clients gets rows for its busy ones.
   */
  async liveCallCounts(accountIds: string[], now: Date): Promise<Map<string, LiveCallCounts>> {
    const { rows } = await this.pool.query<{
      account_id: string;
      waiting: number;
      active: number;
      waiting_for_window: number;
      scheduled: number;
      waiting_for_retry: number;
    }>({
      ...LIVE_COUNTS,
      values: [accountIds, now],
    });
    return new Map(
      rows.map((r) => [
        r.account_id,
        {
          active: r.active,
          waiting: r.waiting,
          waitingForWindow: r.waiting_for_window,
          scheduled: r.scheduled,
          waitingForRetry: r.waiting_for_retry,
        },
      ]),
    );
  }

  /**
   * The account's most recent calls (of one status, when given), newest first: its own and those listed for it (an
   * agency's key on its agents). Each read on its own index, newest first, then merged: as one `OR`, PostgreSQL would
   * read and sort every call of the account.
   */
  async listCallsOfAccount(query: {
    accountId: string;
    status: CallStatus | null;
    limit: number;
  }): Promise<CallWithMetadataText[]> {
    const status = query.status ? { status: query.status } : {};
    const newest = (where: Prisma.CallWhereInput) =>
      this.prisma.call.findMany({
        where: { ...where, ...status },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: query.limit,
        omit: { metadata: true },
      });
    const [own, listed] = await Promise.all([
      newest({ accountId: query.accountId }),
      newest({ listedForAccountId: query.accountId }),
    ]);
    const calls = [...own, ...listed]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .slice(0, query.limit);
    return withMetadataTexts(this.pool, calls);
  }

  /** One call with its events and its webhook deliveries (each with its attempts), in order; null when none. */
  async findCallWithHistory(callId: string) {
    const call = await this.prisma.call.findUnique({
      where: { id: callId },
      omit: { metadata: true },
      include: {
        events: { orderBy: { occurredAt: 'asc' } },
        deliveries: { orderBy: { createdAt: 'asc' }, include: { attempts: { orderBy: { attemptNumber: 'asc' } } } },
      },
    });
    return call && (await withMetadataTexts(this.pool, [call]))[0]!;
  }

  async findCallById(callId: string): Promise<Call | null> {
    return this.prisma.call.findUnique({ where: { id: callId } });
  }

  /** Records the provider's id for a call that has none yet (a callback that beat the dialer's own write). */
  async recordProviderCallId(callId: string, providerCallId: string): Promise<void> {
    await this.prisma.call.updateMany({ where: { id: callId, providerCallId: null }, data: { providerCallId } });
  }

  /**
   * Records answering-machine detection's verdict on a call still dialling or connected (no status changes: the
   * call goes on until it ends), and whether a message is being left; false when the call is no longer live.
   */
  async recordAnsweredBy(
    callId: string,
    attempt: number,
    verdict: { answeredBy: AnsweredBy; voicemailLeft: boolean | null },
  ): Promise<boolean> {
    // Only on the attempt the verdict is about: a call retried meanwhile is another attempt's business.
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, attempt, status: { in: [...ACTIVE_STATUSES] } },
      data: verdict,
    });
    return count === 1;
  }

  /** Up to 500 calls due to take their next scripted step. */
  async callsDueToAdvance(due: AdvanceDue): Promise<CallDueToAdvance[]> {
    const { rows } = await this.pool.query<CallDueToAdvance>({
      ...DUE_TO_ADVANCE,
      values: [due.rangBefore, due.talkedBefore, due.providerPrefix],
    });
    return rows;
  }

  /** Calls in each live status, across all accounts (metrics). */
  async liveCallTotals(): Promise<Record<LiveStatus, number>> {
    const { rows } = await this.pool.query<Record<LiveStatus, number>>({ ...LIVE_TOTALS });
    return rows[0]!;
  }
}
