// The transition's locking selects (a batch's calls in id order, FOR UPDATE) and the simulated dialer's due calls,
// with every column of calls under the Prisma model's names. Hand-written: row locks (SKIP LOCKED among them) Prisma
// cannot express, on the transition's pg client.
import type pg from 'pg';
import type { Call } from '../generated/prisma/client.js';
import type { CallStatus } from '../../schemas/vocabulary.js';
import { statement } from './statements.js';

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
  c.timezone_source::text AS "timezoneSource", c.listed_for_account_id AS "listedForAccountId", c.outcome,
  c.recipient_region AS "recipientRegion", c.consent, c.compliance, c.held_by AS "heldBy",
  c.carrier, c.carrier_account_id AS "carrierAccountId"`;

/**
 * The runtime's result of each call's current attempt (call_results.body: the published result, as stored), read once
 * the calls are locked: the terminal event a transition writes carries it (src/calls/transition.ts). Not a column of
 * the locking select: its snapshot is taken before it waits for a lock, and a result recorded under that lock
 * meanwhile (src/storage/call-results.ts) would be missing from the event that should carry it.
 */
const RESULTS = statement(
  'oct_lock_results',
  `SELECT call_id AS "callId", attempt, body::text AS body FROM call_results WHERE call_id = ANY($1::uuid[])`,
);

/**
 * Sets each locked call's `result` (null: none yet) when one was ever answered: only those can have one. A result of
 * an earlier attempt is not the current attempt's.
 */
export async function readResults(client: pg.ClientBase, calls: LockedCall[]): Promise<void> {
  const answered = calls.filter((c) => c.answeredAt !== null);
  if (answered.length === 0) return;
  const { rows } = await client.query<{ callId: string; attempt: number; body: string }>({
    ...RESULTS,
    values: [answered.map((c) => c.id)],
  });
  const stored = new Map(rows.map((r) => [r.callId, r]));
  for (const call of answered) {
    const result = stored.get(call.id);
    call.result = result?.attempt === call.attempt ? result.body : null;
  }
}

/**
 * A call as a transition locks it, with its agent's retry policy as stored (unchecked; src/calls/transition.ts checks
 * it): an attempt that ends is retried under the policy as it is then. Absent where the locking read has no need of it.
 */
export type LockedCall = Call & {
  /** The current attempt's runtime result as stored (JSON text), once readResults read it; null: none yet. */
  result?: string | null;
  retryPolicy?: { maxAttempts: unknown; retryOn: unknown; waitsMinutes: unknown };
};

/** The agent's retry policy, for `FROM calls c JOIN agents ag ON ag.id = c.agent_id` (locked FOR UPDATE OF c only). */
const RETRY_POLICY = `jsonb_build_object('maxAttempts', ag.max_attempts, 'retryOn', ag.retry_on,
  'waitsMinutes', ag.retry_waits_minutes) AS "retryPolicy"`;

/** Locks the given calls in id order (concurrent batches take their locks in one order); not their agents. */
const LOCK_CALLS = statement(
  'oct_lock_calls',
  `SELECT ${CALL_COLUMNS}, ${RETRY_POLICY} FROM calls c JOIN agents ag ON ag.id = c.agent_id
    WHERE c.id = ANY($1::uuid[]) ORDER BY c.id FOR UPDATE OF c`,
);

/** A call whose scripted ring or talk time is over, with the times its script counts from. */
export interface CallDueToAdvance {
  id: string;
  status: 'dialing' | 'in_progress';
  startedAt: Date;
  answeredAt: Date | null;
}

/**
 * Which calls are due: those of the provider whose ids start with `providerPrefix` that rang or talked long enough,
 * dialled by the simulated dialer (carrier; null: before calls recorded it, when only the environment's dialled).
 */
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
export const DUE_TO_ADVANCE = statement(
  'oct_sim_due',
  `
  SELECT id, status::text AS status, started_at AS "startedAt", answered_at AS "answeredAt" FROM calls
   WHERE (status = '${RINGING}' AND started_at <= $1 OR status = '${TALKING}' AND answered_at <= $2)
     AND starts_with(provider_call_id, $3) AND (carrier IS NULL OR carrier = 'simulated')
   LIMIT 500`,
);

/** The same calls (with their agents' retry policies), locked in id order; those another process is moving are left to it. */
const LOCK_DUE_TO_ADVANCE = statement(
  'oct_sim_lock_due',
  `
  SELECT ${CALL_COLUMNS}, ${RETRY_POLICY} FROM calls c JOIN agents ag ON ag.id = c.agent_id
   WHERE c.id = ANY($4::uuid[])
     AND (c.status = '${RINGING}' AND c.started_at <= $1 OR c.status = '${TALKING}' AND c.answered_at <= $2)
     AND starts_with(c.provider_call_id, $3) AND (c.carrier IS NULL OR c.carrier = 'simulated')
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

export function lockingSelect(calls: CallsToLock) {
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
