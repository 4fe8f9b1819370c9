// Call events, webhook deliveries and their attempts in bulk, each row spelled out by the test: the backlogs and
// delivery histories the worker's claim and the Overview's endpoint health are tested against.
import { bulk, insertUnnested, type Db } from './bulk.js';

/** One event of a call's history. */
export interface EventRow {
  callId: string;
  fromStatus?: string | null;
  toStatus: string;
  failureReason?: string | null;
  /** Who moved the call (api, dispatcher, provider, test). */
  source: string;
  occurredAt: Date;
}

/** Call events in one statement, in the order given; returns their ids in that order (what a delivery announces). */
export function bulkInsertCallEvents(db: Db, events: readonly EventRow[]): Promise<string[]> {
  return insertUnnested(db, 'call_events', [
    { name: 'call_id', type: 'uuid', values: events.map((e) => e.callId) },
    { name: 'from_status', type: 'text', cast: 'call_status', values: events.map((e) => e.fromStatus) },
    { name: 'to_status', type: 'text', cast: 'call_status', values: events.map((e) => e.toStatus) },
    { name: 'failure_reason', type: 'text', cast: 'failure_reason', values: events.map((e) => e.failureReason) },
    { name: 'source', type: 'text', values: events.map((e) => e.source) },
    { name: 'occurred_at', type: 'timestamptz', values: events.map((e) => e.occurredAt) },
  ]);
}

/** One delivery of a call event to an endpoint, as the worker left it. */
export interface DeliveryRow {
  endpointId: string;
  callId: string;
  callEventId: string;
  /** call.started, call.completed... */
  eventType: string;
  /** Default `{}`. */
  payload?: string;
  /** Default pending. */
  status?: 'pending' | 'succeeded' | 'failed';
  /** Default 0. */
  attemptCount?: number;
  nextAttemptAt: Date;
  lastAttemptAt?: Date | null;
  completedAt?: Date | null;
  createdAt: Date;
}

/**
 * Deliveries in one statement, in the order given (the order the worker reads ties in); returns their ids in that
 * order: a backlog or a delivery history of thousands, with the times the test needs.
 */
export function bulkInsertDeliveries(db: Db, deliveries: readonly DeliveryRow[]): Promise<string[]> {
  return insertUnnested(db, 'webhook_deliveries', [
    { name: 'endpoint_id', type: 'uuid', values: deliveries.map((d) => d.endpointId) },
    { name: 'call_id', type: 'uuid', values: deliveries.map((d) => d.callId) },
    { name: 'call_event_id', type: 'uuid', values: deliveries.map((d) => d.callEventId) },
    { name: 'event_type', type: 'text', values: deliveries.map((d) => d.eventType) },
    { name: 'payload', type: 'text', values: deliveries.map((d) => d.payload ?? '{}') },
    { name: 'status', type: 'text', cast: 'delivery_status', values: deliveries.map((d) => d.status ?? 'pending') },
    { name: 'attempt_count', type: 'int', values: deliveries.map((d) => d.attemptCount ?? 0) },
    { name: 'next_attempt_at', type: 'timestamptz', values: deliveries.map((d) => d.nextAttemptAt) },
    { name: 'last_attempt_at', type: 'timestamptz', values: deliveries.map((d) => d.lastAttemptAt) },
    { name: 'completed_at', type: 'timestamptz', values: deliveries.map((d) => d.completedAt) },
    { name: 'created_at', type: 'timestamptz', values: deliveries.map((d) => d.createdAt) },
  ]);
}

/** One attempt of a delivery: its answer's status, or null for none (a timeout). */
export interface AttemptRow {
  deliveryId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
}

/** Attempts in one statement, in the order given: a delivery's past tries, as the worker records them. */
export async function bulkInsertAttempts(db: Db, attempts: readonly AttemptRow[]): Promise<void> {
  await insertUnnested(db, 'webhook_attempts', [
    { name: 'delivery_id', type: 'uuid', values: attempts.map((a) => a.deliveryId) },
    { name: 'attempt_number', type: 'int', values: attempts.map((a) => a.attemptNumber) },
    { name: 'started_at', type: 'timestamptz', values: attempts.map((a) => a.startedAt) },
    { name: 'duration_ms', type: 'int', values: attempts.map((a) => a.durationMs) },
    { name: 'response_status', type: 'int', values: attempts.map((a) => a.responseStatus) },
  ]);
}

/** Endpoints in one statement (no admin function writes many at once; setWebhook resolves and audits each). */
export function bulkInsertEndpoints(
  db: Db,
  endpoints: readonly { accountId: string; url: string; secret: string }[],
): Promise<string[]> {
  return insertUnnested(db, 'webhook_endpoints', [
    { name: 'account_id', type: 'uuid', values: endpoints.map((e) => e.accountId) },
    { name: 'url', type: 'text', values: endpoints.map((e) => e.url) },
    { name: 'secret', type: 'text', values: endpoints.map((e) => e.secret) },
    { name: 'updated_at', type: 'timestamptz', values: endpoints.map(() => new Date()) },
  ]);
}

/**
 * A pending call.completed delivery, to the account's endpoint, of each of its `count` newest calls' completion
 * events, after `attemptCount` attempts and due at `nextAttemptAt`; returns their ids: deliveries of a history already
 * in place, for the worker to send, retry or give up on.
 */
export async function insertDeliveriesOfNewestCalls(
  db: Db,
  deliveries: { accountId: string; count: number; attemptCount: number; nextAttemptAt: Date; createdAt: Date },
): Promise<string[]> {
  const rows = await bulk<{ id: string }>(
    db,
    `INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, attempt_count, next_attempt_at, created_at)
     SELECT gen_random_uuid(), e.id, ev.call_id, ev.id, 'call.completed', '{"type":"call.completed"}', $3::int, $4::timestamptz, $5::timestamptz
       FROM webhook_endpoints e
       JOIN LATERAL (SELECT ev.id, ev.call_id FROM calls c JOIN call_events ev ON ev.call_id = c.id AND ev.to_status = 'completed'
                      WHERE c.account_id = e.account_id ORDER BY c.created_at DESC LIMIT $2) ev ON true
      WHERE e.account_id = $1::uuid
     RETURNING id::text`,
    [deliveries.accountId, deliveries.count, deliveries.attemptCount, deliveries.nextAttemptAt, deliveries.createdAt],
  );
  return rows.map((r) => r.id);
}
