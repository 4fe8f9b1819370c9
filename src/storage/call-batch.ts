// The transition's write: one statement for a batch of calls (their rows, events, deliveries and notifications), and
// an operator's audit entries beside it, in the transition's own pg transaction (calls.ts). Hand-written: Prisma
// would send a statement per row and table, and cannot run on the transaction's pg client.
import type pg from 'pg';
import type { Transition } from '../domain/call-lifecycle.js';
import type { Call } from '../generated/prisma/client.js';
import type { AuditActor } from '../generated/prisma/enums.js';
import { CALLS_CHANNEL, WEBHOOKS_CHANNEL } from './channels.js';
import { heldReason } from './deliveries.js';
import { openClaimed, type ClaimedDelivery, type ClaimedDeliveryRow } from './delivery-work.js';
import type { SecretVault } from './secrets.js';
import { statement } from './statements.js';

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
  /**
   * Not sent before this moment: an answered call's terminal event waiting for the runtime's result (written then
   * into the payload by src/storage/call-results.ts). Null or absent: due at once. Never leased to the caller.
   */
  notBefore?: Date | null;
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
  SELECT d.id, w.id, d.call_id, d.event_id, d.event_type, d.payload, coalesce(d.not_before, $13::timestamptz),
         CASE WHEN d.event_type = $29::text AND w.enabled AND d.not_before IS NULL THEN $30::timestamptz END,
         CASE WHEN w.enabled THEN 'pending' ELSE 'held' END::delivery_status,
         CASE WHEN NOT w.enabled THEN ${heldReason('w.disabled_reason')} END
    FROM unnest($19::uuid[], $20::uuid[], $21::uuid[], $22::uuid[], $23::text[], $24::text[], $38::timestamptz[])
         AS d(id, account_id, call_id, event_id, event_type, payload, not_before)
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
                    w.url, w.secret, w.enabled, w.account_id AS "accountId"
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
 * notifications. Returns the deliveries written under `lease`, their secrets opened with `secrets`.
 */
export async function writeCallBatch(
  client: pg.ClientBase,
  batch: CallBatch,
  secrets: SecretVault,
): Promise<ClaimedDelivery[]> {
  const { calls: rows, events, deliveries, source, now, lease } = batch;
  const column = <T>(pick: (call: Call) => T) => rows.map(pick);
  const { rows: leased } = await client.query<ClaimedDeliveryRow | { [K in keyof ClaimedDeliveryRow]: null }>({
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
      deliveries.map((d) => d.notBefore ?? null),
    ],
  });
  return openClaimed(
    leased.filter((d): d is ClaimedDeliveryRow => d.id !== null),
    secrets,
  );
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

export async function writeAudit(client: pg.ClientBase, entries: CallBatchAudit[]): Promise<void> {
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
