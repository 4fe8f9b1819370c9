// Call events, webhook deliveries and their attempts in bulk, each row spelled out by the test: the backlogs and
// delivery histories the worker's claim and the Overview's endpoint health are tested against.
import { insertUnnested, type Db } from './bulk.js';

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
