// The calls on their hot paths, prepared on the pool: acceptance (one statement for every trigger), the counts of an
// account's live calls, the transition transaction (its locks in call-locks.ts, its write in call-batch.ts), the
// simulated dialer's advance. Hand-written: each runs per trigger, per batch or per pass, and a named statement costs a
// fraction of a Prisma query's CPU; the transition's locks are FOR UPDATE. The reads of callbacks and operators are in
// call-reads.ts.
import type pg from 'pg';
import { ACTIVE_STATUSES, type LIVE_STATUSES, type TimezoneSource } from '../../schemas/vocabulary.js';
import { writeAudit, writeCallBatch, type PlannedBatch } from './call-batch.js';
import {
  lockingSelect,
  readResults,
  DUE_TO_ADVANCE,
  type AdvanceDue,
  type CallDueToAdvance,
  type CallsToLock,
  type LockedCall,
} from './call-locks.js';
import { CallReads } from './call-reads.js';
import type { PoolDriver } from './driver.js';
import type { ClaimedDelivery } from './delivery-work.js';
import { statement } from './statements.js';
import { againIfDeadlocked, inTransaction } from './transaction.js';

export {
  writeCallBatch,
  type CallBatch,
  type CallBatchAudit,
  type CallBatchDelivery,
  type CallBatchEvent,
  type DeliveryLease,
  type PlannedBatch,
} from './call-batch.js';
export {
  CALL_COLUMNS,
  type AdvanceDue,
  type CallDueToAdvance,
  type CallsToLock,
  type LockedCall,
} from './call-locks.js';
export type { CallWithMetadataText } from './call-reads.js';

type LiveStatus = (typeof LIVE_STATUSES)[number];

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
  /** The trigger's recipient_region, normalised (US-FL); null for none. */
  recipientRegion: string | null;
  /** The trigger's consent record as validated; null for none. */
  consent: object | null;
}

// Hand-written: the function (migration 20261202120000; v3 of 20261201160000 without the last two) checks the do-not-call lists (the account's, its agency's and
// the listed client's), takes the account's row lock and writes call, event and idempotency response in one round trip; Prisma would need an interactive transaction of four. The casts pin the
// one overload whatever types the driver gives the parameters.
const ACCEPT_CALL = statement(
  'oct_accept_call_v4',
  `SELECT oct_accept_call_v4($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, $6::text, $7::text, $8::text, $9::text,
  $10::json, $11::timestamptz, $12::timestamptz, $13::timestamptz, $14::timestamptz, $15::int, $16::uuid, $17::int, $18::jsonb,
  $19::timestamptz, $20::text, $21::timezone_source, $22::uuid, $23::text, $24::jsonb) AS waiting`,
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

// Hand-written: the waiting total is the sum of the counters the triggers keep (counting waiting calls would read
// every one of them); active calls are counted on the status index (at most the limit per account).
const LIVE_TOTALS = statement(
  'oct_live_totals',
  `
  SELECT (SELECT coalesce(sum(waiting_calls), 0)::int FROM accounts) AS initiated,
         (SELECT count(*)::int FROM calls WHERE status = 'dialing') AS dialing,
         (SELECT count(*)::int FROM calls WHERE status = 'in_progress') AS in_progress`,
);

/** The calls' pool repository: the Prisma reads and records of call-reads.ts, and the hot paths' statements. */
export class CallRepository extends CallReads {
  private readonly pool: pg.Pool;

  constructor(driver: PoolDriver) {
    super(driver);
    this.pool = driver.pool;
  }

  /**
   * The transition transaction, in four round trips of a batch (five with an answered call among them): BEGIN, the
   * locking SELECT of `calls` (in id order, so that concurrent batches take their locks in one order), the runtime
   * results of the answered ones read under those locks (readResults), one write of what `plan` decides for the
   * locked rows (writeCallBatch), COMMIT. A method owning its pg transaction rather than a step of
   * `Storage.transaction`: Prisma's interactive transactions cannot run on a pg client, and this path must not pay
   * Prisma's per-statement cost. A batch with audit entries (an operator's cancel) writes them too, before COMMIT.
   * Returns `plan`'s result and the deliveries written under the batch's lease.
   */
  async transition<T>(
    calls: CallsToLock,
    plan: (locked: LockedCall[]) => PlannedBatch<T>,
  ): Promise<{ result: T; leased: ClaimedDelivery[] }> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<LockedCall>(lockingSelect(calls));
      await readResults(client, rows);
      const { batch, result } = plan(rows);
      const leased = batch ? await writeCallBatch(client, batch, this.secrets) : [];
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
          row.recipientRegion,
          row.consent === null ? null : JSON.stringify(row.consent),
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
