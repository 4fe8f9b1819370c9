// The data lifecycle's SQL: one batched DELETE per kind of row past its retention, on the retention's own pool (its
// pass lock in retention-lock.ts). Hand-written throughout: a DELETE of at most n rows taken oldest first from an index
// range, skipping rows a request holds, has no Prisma form (deleteMany takes no LIMIT, ORDER BY or SKIP LOCKED).
import type pg from 'pg';
import { TERMINAL_STATUSES } from '../../schemas/vocabulary.js';
import { SqlRepository } from './driver.js';
import { BATCH_TIMEOUT_MS, createRetentionPool, tryRetentionLock, type RetentionLock } from './retention-lock.js';
import { statement } from './statements.js';
import { inTransaction } from './transaction.js';

export { BATCH_TIMEOUT_MS, createRetentionPool, tryRetentionLock, type RetentionLock } from './retention-lock.js';

/** The tables rows are deleted from, as the metric labels them. */
export const RETENTION_TABLES = [
  'idempotency_records',
  'sessions',
  'one_time_tokens',
  'webhook_deliveries',
  'webhook_attempts',
  'calls',
  'call_events',
  'audit_log',
] as const;
export type RetentionTable = (typeof RETENTION_TABLES)[number];
export type DeletedRows = Record<RetentionTable, number>;

export const noRowsDeleted = (): DeletedRows => Object.fromEntries(RETENTION_TABLES.map((t) => [t, 0])) as DeletedRows;

/** What is past its retention: rows at or before these moments go (see each step). */
export interface RetentionCutoffs {
  /** Idempotency records, sessions and one-time links whose expiry is at or before it; links used at or before it. */
  now: Date;
  /** Sessions last seen at or before it are idle (DASHBOARD_SESSION_IDLE_MINUTES). */
  sessionsIdleSince: Date;
  /** Finished webhook deliveries (and their attempts) completed before it. */
  deliveriesBefore: Date;
  /** Finished calls (and their events, deliveries and attempts) ended before it. */
  callsBefore: Date;
  auditBefore: Date;
}

const SET_BATCH_TIMEOUT = statement('oct_retention_batch_timeout', `SELECT set_config('statement_timeout', $1, true)`);

/** One batch: the rows deleted, and the rows of the step's own range (fewer than the limit: the range is empty). */
export interface RetentionBatch {
  taken: number;
  deleted: Partial<DeletedRows>;
}

/** A kind of row past its retention, deleted a batch at a time. */
export interface RetentionStep {
  name: string;
  table: RetentionTable;
  run(client: pg.ClientBase, cutoffs: RetentionCutoffs, limit: number): Promise<RetentionBatch>;
}

/** Runs one batch of a step in a transaction of its own, under the batch timeout. */
export async function deleteBatch(
  pool: pg.Pool,
  step: RetentionStep,
  cutoffs: RetentionCutoffs,
  limit: number,
): Promise<RetentionBatch> {
  return inTransaction(pool, async (client) => {
    await client.query({ ...SET_BATCH_TIMEOUT, values: [`${BATCH_TIMEOUT_MS}ms`] });
    return step.run(client, cutoffs, limit);
  });
}

/**
 * A step over one table whose rows go when `column` is at or before (or before) the step's cutoff: the oldest first,
 * read from the column's index (ORDER BY keeps the planner on it, whatever it guesses of the range's size); rows a
 * request holds are skipped (found again next pass); a row changed meanwhile is re-checked under its lock. The ids
 * are handed over as an array: `id IN (subquery)` let the generic plan (which cannot see the LIMIT) hash-join the
 * subquery against a sequential scan of the whole table.
 */
function simpleStep(
  name: string,
  table: RetentionTable,
  column: string,
  operator: '<=' | '<',
  cutoff: (c: RetentionCutoffs) => Date,
): RetentionStep {
  const sql = statement(
    `oct_retention_${name}`,
    `
    DELETE FROM ${table} WHERE id = ANY(ARRAY(
      SELECT id FROM ${table} WHERE ${column} ${operator} $1 ORDER BY ${column} LIMIT $2 FOR UPDATE SKIP LOCKED))`,
  );
  return {
    name,
    table,
    async run(client, cutoffs, limit) {
      const { rowCount } = await client.query({ ...sql, values: [cutoff(cutoffs), limit] });
      return { taken: rowCount ?? 0, deleted: { [table]: rowCount ?? 0 } };
    },
  };
}

interface CascadeCounts {
  calls?: number;
  call_events?: number;
  webhook_deliveries: number;
  webhook_attempts: number;
}

// The two deletions below are planned with each batch's values (planEachTime): prepared, their generic plan (blind to
// the LIMIT) counted the attempts by reading all of webhook_attempts (test/storage/no-sequential-scans.test.ts).

/**
 * Finished deliveries (succeeded or failed, never pending or held) completed before the cutoff, with their attempts
 * (ON DELETE CASCADE; counted in the same statement, before the cascade runs at its end). A delivery sent again
 * (pending, its completed_at cleared) meanwhile is re-checked under its lock and kept. A held delivery (its endpoint is
 * disabled) is kept however old, until it is sent: it is an event the receiver has not had.
 */
const DELETE_DELIVERIES = statement(
  'oct_retention_webhook_deliveries',
  `
  WITH doomed AS (
    SELECT id FROM webhook_deliveries WHERE completed_at < $1 AND status IN ('succeeded', 'failed')
     ORDER BY completed_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ), gone AS (
    DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING id
  )
  SELECT (SELECT count(*) FROM gone)::int AS webhook_deliveries,
         (SELECT count(*) FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM gone))::int AS webhook_attempts`,
  { planEachTime: true },
);

const deliveriesStep: RetentionStep = {
  name: 'webhook_deliveries',
  table: 'webhook_deliveries',
  async run(client, cutoffs, limit) {
    const { rows } = await client.query<CascadeCounts>({
      ...DELETE_DELIVERIES,
      values: [cutoffs.deliveriesBefore, limit],
    });
    const counts = rows[0] ?? { webhook_deliveries: 0, webhook_attempts: 0 };
    return { taken: counts.webhook_deliveries, deleted: counts };
  },
};

/**
 * Finished calls (completed, or failed for any reason, expired included) ended before the cutoff, with their events,
 * deliveries and attempts (all ON DELETE CASCADE, counted before the cascade runs). Never a call that is not finished
 * (its ended_at is null), nor one with a delivery still pending or held: the deliveries of the chosen calls are
 * locked, so one sent again meanwhile is seen pending and keeps its call (a replay waiting on the lock then finds it
 * gone).
 */
const DELETE_CALLS = statement(
  'oct_retention_calls',
  `
  WITH candidates AS (
    SELECT c.id FROM calls c
     WHERE c.ended_at < $1 AND c.status = ANY($3::call_status[])
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.call_id = c.id AND d.status IN ('pending', 'held'))
     ORDER BY c.ended_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ), deliveries AS (
    SELECT d.id, d.call_id, d.status FROM webhook_deliveries d WHERE d.call_id IN (SELECT id FROM candidates) FOR UPDATE
  ), gone AS (
    DELETE FROM calls WHERE id = ANY(ARRAY(
      SELECT id FROM candidates WHERE id NOT IN (SELECT call_id FROM deliveries WHERE status IN ('pending', 'held'))))
    RETURNING id
  )
  SELECT (SELECT count(*) FROM candidates)::int AS taken,
         (SELECT count(*) FROM gone)::int AS calls,
         (SELECT count(*) FROM call_events WHERE call_id IN (SELECT id FROM gone))::int AS call_events,
         (SELECT count(*) FROM deliveries WHERE call_id IN (SELECT id FROM gone))::int AS webhook_deliveries,
         (SELECT count(*) FROM webhook_attempts WHERE delivery_id IN
            (SELECT id FROM deliveries WHERE call_id IN (SELECT id FROM gone)))::int AS webhook_attempts`,
  { planEachTime: true },
);

const callsStep: RetentionStep = {
  name: 'calls',
  table: 'calls',
  async run(client, cutoffs, limit) {
    const { rows } = await client.query<CascadeCounts & { taken: number }>({
      ...DELETE_CALLS,
      values: [cutoffs.callsBefore, limit, TERMINAL_STATUSES],
    });
    const { taken, ...deleted } = rows[0] ?? {
      taken: 0,
      calls: 0,
      call_events: 0,
      webhook_deliveries: 0,
      webhook_attempts: 0,
    };
    return { taken, deleted };
  },
};

/**
 * Every kind of row past its retention, in the order a pass deletes them. Each range is served by an index: expires_at
 * (idempotency records, sessions, links), last_seen_at and used_at (sessions, links), completed_at (deliveries),
 * ended_at (calls) and created_at (audit log); cascades follow call_events(call_id), webhook_deliveries(call_id) and
 * (call_event_id), webhook_attempts(delivery_id).
 */
export const RETENTION_STEPS: readonly RetentionStep[] = [
  // Expired at expires_at (24 h after the first request): a replay after it is a new request anyway.
  simpleStep('idempotency_records', 'idempotency_records', 'expires_at', '<=', (c) => c.now),
  simpleStep('sessions_expired', 'sessions', 'expires_at', '<=', (c) => c.now),
  simpleStep('sessions_idle', 'sessions', 'last_seen_at', '<=', (c) => c.sessionsIdleSince),
  simpleStep('tokens_used', 'one_time_tokens', 'used_at', '<=', (c) => c.now),
  simpleStep('tokens_expired', 'one_time_tokens', 'expires_at', '<=', (c) => c.now),
  deliveriesStep,
  callsStep,
  simpleStep('audit_log', 'audit_log', 'created_at', '<', (c) => c.auditBefore),
];

/**
 * The retention's repository, over its own pool (createRetentionPool says why it is apart from the service's two):
 * the pass lock and the batches, each batch a pg transaction of its own.
 */
export class RetentionRepository extends SqlRepository {
  constructor(pool: pg.Pool) {
    super({ pool });
  }

  /** The pass lock, or null when another process holds it (tryRetentionLock). */
  tryLock(): Promise<RetentionLock | null> {
    return tryRetentionLock(this.pool);
  }

  /** One batch of `step` in a transaction of its own (deleteBatch). */
  deleteBatch(step: RetentionStep, cutoffs: RetentionCutoffs, limit: number): Promise<RetentionBatch> {
    return deleteBatch(this.pool, step, cutoffs, limit);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** A retention repository on a pool of its own for `databaseUrl`; its owner closes it. */
export function createRetention(databaseUrl: string): RetentionRepository {
  return new RetentionRepository(createRetentionPool(databaseUrl));
}
