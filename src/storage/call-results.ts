// The runtime's results (call_results, one per call, and calls.outcome) and the terminal event that waits for one.
// Hand-written on the pool: a result is recorded under the call's row lock, the same lock a transition takes
// (src/storage/call-locks.ts), so a result and the call's end are ordered one way or the other and the terminal event
// carries a result exactly when it was in first; the event waiting for it is found with SKIP LOCKED, as the webhook
// worker's claim locks it (Prisma can express neither lock).
import type { CallStatus } from '../../schemas/vocabulary.js';
import { WEBHOOKS_CHANNEL } from './channels.js';
import { SqlRepository } from './driver.js';
import { statement } from './statements.js';

/** The call as a result finds it, locked, with the result it has and the terminal event that still waits. */
export interface CallForResult {
  id: string;
  accountId: string;
  agentId: string;
  phoneNumber: string;
  status: CallStatus;
  attempt: number;
  answeredAt: Date | null;
  endedAt: Date | null;
  /** The stored result's digest and attempt; null without one. */
  storedDigest: string | null;
  storedAttempt: number | null;
  /** How many terminal events (call.completed, call.failed) were written for the call's endpoint. */
  terminalDeliveries: number;
  /** The terminal event still waiting for the result (pending, never tried, unclaimed, not yet due); null otherwise. */
  waiting: { id: string; endpointId: string; payload: string } | null;
}

/** What recording a result writes: the result row (its body the published result), and the waiting event's body. */
export interface ResultWrite {
  attempt: number;
  body: string;
  digest: string;
  outcome: string | null;
  inEvent: boolean;
  receivedAt: Date;
  /** The waiting terminal event's new body (it carries the result) and when it is due; null: left alone. */
  event: { id: string; endpointId: string; payload: string; dueAt: Date } | null;
}

// The call alone, locked. What it has besides is read by the statements after it: one statement's snapshot is taken
// before it waits for the lock, so a transition that ended the call meanwhile would show its new status beside the
// terminal events and result as they were before it.
const LOCK_CALL = statement(
  'oct_result_lock_call',
  `
  SELECT c.id, c.account_id AS "accountId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber",
         c.status::text AS status, c.attempt, c.answered_at AS "answeredAt", c.ended_at AS "endedAt"
    FROM calls c
   WHERE c.id = $1::uuid
     FOR UPDATE`,
);

const STORED = statement(
  'oct_result_stored',
  `
  SELECT r.digest AS "storedDigest", r.attempt AS "storedAttempt",
         (SELECT count(*)::int FROM webhook_deliveries d
           WHERE d.call_id = c.id AND d.event_type IN ('call.completed', 'call.failed')) AS "terminalDeliveries"
    FROM (VALUES ($1::uuid)) AS c(id) LEFT JOIN call_results r ON r.call_id = c.id`,
);

// The worker's claim locks a due delivery before it leases it: one it holds is as good as sent (SKIP LOCKED), and one
// due already is its to send as it is.
const WAITING_EVENT = statement(
  'oct_result_waiting_event',
  `
  SELECT d.id, d.endpoint_id AS "endpointId", d.payload FROM webhook_deliveries d
   WHERE d.call_id = $1::uuid AND d.event_type IN ('call.completed', 'call.failed') AND d.status = 'pending'
     AND d.attempt_count = 0 AND d.lease_expires_at IS NULL AND d.next_attempt_at > $2::timestamptz
     FOR UPDATE SKIP LOCKED`,
);

const WRITE_RESULT = statement(
  'oct_result_write',
  `
  WITH stored AS (
    INSERT INTO call_results (call_id, attempt, body, digest, in_event, received_at)
    VALUES ($1::uuid, $2::int, $3::json, $4::text, $5::boolean, $6::timestamptz)
    ON CONFLICT (call_id) DO UPDATE SET attempt = EXCLUDED.attempt, body = EXCLUDED.body, digest = EXCLUDED.digest,
           in_event = EXCLUDED.in_event, received_at = EXCLUDED.received_at
  ), labelled AS (
    UPDATE calls SET outcome = $7::text WHERE id = $1::uuid
  ), event AS (
    UPDATE webhook_deliveries SET payload = $8::text, next_attempt_at = $9::timestamptz
     WHERE id = $10::uuid
    RETURNING endpoint_id
  )
  SELECT pg_notify($11::text, endpoint_id::text) FROM event`,
);

/** A call as its runtime reads it (GET /agent-runtime/v1/calls/{id}), with what a token is checked against. */
export interface CallContextRow {
  id: string;
  agentId: string;
  agentName: string;
  accountId: string;
  fromNumber: string;
  phoneNumber: string;
  attempt: number;
  status: CallStatus;
  endedAt: Date | null;
  name: string | null;
  email: string | null;
  /** As the client wrote it (JSON text: key order kept). */
  metadata: string;
  scheduledAt: Date | null;
  timezone: string | null;
}

// Hand-written for the metadata's text as stored (Prisma Client would parse it, moving integer-like keys first).
const CONTEXT = statement(
  'oct_result_context',
  `
  SELECT c.id, c.agent_id AS "agentId", ag.name AS "agentName", c.account_id AS "accountId", c.from_number AS "fromNumber",
         c.phone_number AS "phoneNumber", c.attempt, c.status::text AS status, c.ended_at AS "endedAt", c.name, c.email,
         c.metadata::text AS metadata, c.scheduled_at AS "scheduledAt", c.timezone
    FROM calls c JOIN agents ag ON ag.id = c.agent_id
   WHERE c.id = $1::uuid`,
);

export class CallResultRepository extends SqlRepository {
  /** The call as its runtime reads it, or null when there is none. */
  async contextOf(callId: string): Promise<CallContextRow | null> {
    const { rows } = await this.pool.query<CallContextRow>({ ...CONTEXT, values: [callId] });
    return rows[0] ?? null;
  }

  /**
   * Locks the call, asks `plan` what to write (null: nothing), writes it, all in one transaction; resolves with what
   * `plan` answered besides. The call is null when it does not exist.
   */
  async record<T>(
    callId: string,
    now: Date,
    plan: (call: CallForResult | null) => { write: ResultWrite | null; result: T },
  ): Promise<T> {
    return this.transaction(async (client) => {
      type Locked = Omit<CallForResult, 'waiting' | 'storedDigest' | 'storedAttempt' | 'terminalDeliveries'>;
      const { rows } = await client.query<Locked>({ ...LOCK_CALL, values: [callId] });
      const locked = rows[0];
      let call: CallForResult | null = null;
      if (locked) {
        const stored = await client.query<Pick<CallForResult, 'storedDigest' | 'storedAttempt' | 'terminalDeliveries'>>(
          { ...STORED, values: [callId] },
        );
        const waiting = await client.query<NonNullable<CallForResult['waiting']>>({
          ...WAITING_EVENT,
          values: [callId, now],
        });
        call = { ...locked, ...stored.rows[0]!, waiting: waiting.rows[0] ?? null };
      }
      const { write, result } = plan(call);
      if (write) {
        await client.query({
          ...WRITE_RESULT,
          values: [
            callId,
            write.attempt,
            write.body,
            write.digest,
            write.inEvent,
            write.receivedAt,
            write.outcome,
            write.event?.payload ?? null,
            write.event?.dueAt ?? null,
            write.event?.id ?? null,
            WEBHOOKS_CHANNEL,
          ],
        });
      }
      return result;
    });
  }
}
