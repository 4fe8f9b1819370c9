// Calls in bulk, each row spelled out by the test (its account, times, status, name...): the call history, queues
// and backlogs of thousands of calls that the storage's plans and counters are tested against.
import { bulk, type Db } from './bulk.js';

/** One call as the test wants it stored; what it leaves out is as acceptance would write it. */
export interface CallRow {
  accountId: string;
  agentId: string;
  createdAt: Date;
  /** Default +14155552671. */
  phoneNumber?: string;
  /** The agent's caller ID at acceptance (default +14155550100). */
  fromNumber?: string;
  name?: string | null;
  /** The metadata's JSON text, stored as is (default `{}`). */
  metadataJson?: string;
  /** Default initiated. */
  status?: 'initiated' | 'dialing' | 'in_progress' | 'completed' | 'failed';
  failureReason?: string | null;
  /** Default createdAt. */
  notBefore?: Date;
  /** Default a day after notBefore. */
  expiresAt?: Date;
  /** Default createdAt. */
  updatedAt?: Date;
  startedAt?: Date | null;
  answeredAt?: Date | null;
  endedAt?: Date | null;
  durationSeconds?: number | null;
  providerCallId?: string | null;
  /** Default 0. */
  dialAttempts?: number;
  leaseOwner?: string | null;
  leaseExpiresAt?: Date | null;
  /** Default 1. */
  attempt?: number;
  nextAttemptAt?: Date | null;
  scheduledAt?: Date | null;
  listedForAccountId?: string | null;
  /** The runtime's outcome label (as its result copies it). */
  outcome?: string | null;
  /** What holds a waiting call (the dispatcher's calling rules or a cap). */
  heldBy?: 'calling_rules' | 'cap' | null;
  /** The decision records, stored as JSON. */
  compliance?: unknown;
}

/**
 * Each column: its type in the statement's arrays, how a row gives it, and the value of a row that leaves it out (an
 * SQL expression, given those of the columns before it; NULL without).
 */
const COLUMNS: [string, string, (c: CallRow) => unknown, ((e: Record<string, string>) => string)?][] = [
  ['account_id', 'uuid', (c) => c.accountId],
  ['agent_id', 'uuid', (c) => c.agentId],
  ['listed_for_account_id', 'uuid', (c) => c.listedForAccountId],
  ['phone_number', 'text', (c) => c.phoneNumber, () => `'+14155552671'`],
  ['from_number', 'text', (c) => c.fromNumber, () => `'+14155550100'`],
  ['name', 'text', (c) => c.name],
  ['metadata', 'text', (c) => c.metadataJson, () => `'{}'`],
  ['status', 'text', (c) => c.status, () => `'initiated'`],
  ['failure_reason', 'text', (c) => c.failureReason],
  ['created_at', 'timestamptz', (c) => c.createdAt],
  ['not_before', 'timestamptz', (c) => c.notBefore, (e) => e.created_at!],
  ['expires_at', 'timestamptz', (c) => c.expiresAt, (e) => `(${e.not_before!}) + interval '1 day'`],
  ['updated_at', 'timestamptz', (c) => c.updatedAt, (e) => e.created_at!],
  ['started_at', 'timestamptz', (c) => c.startedAt],
  ['answered_at', 'timestamptz', (c) => c.answeredAt],
  ['ended_at', 'timestamptz', (c) => c.endedAt],
  ['duration_seconds', 'int', (c) => c.durationSeconds],
  ['provider_call_id', 'text', (c) => c.providerCallId],
  ['dial_attempts', 'int', (c) => c.dialAttempts, () => '0'],
  ['lease_owner', 'text', (c) => c.leaseOwner],
  ['lease_expires_at', 'timestamptz', (c) => c.leaseExpiresAt],
  ['attempt', 'int', (c) => c.attempt, () => '1'],
  ['next_attempt_at', 'timestamptz', (c) => c.nextAttemptAt],
  ['scheduled_at', 'timestamptz', (c) => c.scheduledAt],
  ['outcome', 'text', (c) => c.outcome],
  ['held_by', 'text', (c) => c.heldBy],
  ['compliance', 'text', (c) => (c.compliance == null ? c.compliance : JSON.stringify(c.compliance))],
];

/** Casts from the text arrays to the columns' own types. */
const CAST: Record<string, string> = {
  metadata: 'json',
  status: 'call_status',
  failure_reason: 'failure_reason',
  compliance: 'jsonb',
};

/**
 * `calls` written in one statement, in the order given (the table's physical order, which the planner weighs), with
 * no event; returns their ids in that order. What a history, a queue or a backlog of thousands of calls is made of:
 * acceptance one by one would take minutes and could not write the past.
 */
export async function bulkInsertCalls(db: Db, calls: readonly CallRow[]): Promise<string[]> {
  // Only the columns some row gives travel as arrays (100,000 rows of two dozen mostly empty arrays took seconds).
  const given = COLUMNS.filter(([, , of]) => calls.some((c) => of(c) !== undefined));
  const values = given.map(([, , of]) =>
    calls.map((c) => {
      const v = of(c);
      return v instanceof Date ? v.toISOString() : (v ?? null);
    }),
  );
  const unnested = given.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  // Each column's value, in order, so that a default may use the columns before it (not_before, created_at).
  const expressions: Record<string, string> = {};
  for (const [name, , , fallback] of COLUMNS) {
    const value = given.some(([n]) => n === name) ? `r.${name}${CAST[name] ? `::${CAST[name]}` : ''}` : null;
    const otherwise = fallback?.(expressions);
    expressions[name] = value && otherwise ? `coalesce(${value}, ${otherwise})` : (value ?? otherwise ?? 'NULL');
  }
  const names = COLUMNS.map(([name]) => name);
  const rows = await bulk<{ id: string }>(
    db,
    `INSERT INTO calls (id, ${names.join(', ')})
     SELECT gen_random_uuid(), ${names.map((n) => expressions[n]).join(', ')}
       FROM unnest(${unnested}) WITH ORDINALITY AS r(${given.map(([n]) => n).join(', ')}, n)
      ORDER BY r.n
     RETURNING id::text`,
    values,
  );
  return rows.map((r) => r.id);
}

/** One call as bulkInsertCalls writes it; returns its id. */
export async function insertCallAt(db: Db, call: CallRow): Promise<string> {
  return (await bulkInsertCalls(db, [call]))[0]!;
}

/**
 * Completed calls of an account that ended at `endedAt` (created, due and expired then too), each with its
 * `initiated` and `completed` events: a finished history old enough (or not) for retention to delete.
 */
export async function insertEndedCalls(
  db: Db,
  calls: { accountId: string; agentId: string; count: number; endedAt: Date },
): Promise<string[]> {
  const at = calls.endedAt;
  const ids = await bulkInsertCalls(
    db,
    Array.from({ length: calls.count }, () => ({
      accountId: calls.accountId,
      agentId: calls.agentId,
      status: 'completed' as const,
      createdAt: at,
      notBefore: at,
      expiresAt: at,
      endedAt: at,
    })),
  );
  await bulk(
    db,
    `INSERT INTO call_events (id, call_id, to_status, source, occurred_at)
     SELECT gen_random_uuid(), c.id, s.status::call_status, 'test', $2
       FROM unnest($1::uuid[]) AS c(id) CROSS JOIN (VALUES ('initiated'), ('completed')) AS s(status)`,
    [ids, at],
  );
  return ids;
}

/** One idempotency record as a replay would find it. */
export interface IdempotencyRow {
  accountId: string;
  key: string;
  createdAt: Date;
  /** Default createdAt: already expired. */
  expiresAt?: Date;
  /** Default `x`. */
  requestHash?: string;
  /** The stored answer (none: still in flight). */
  responseStatus?: number;
  responseBody?: string;
}

/**
 * Idempotency records in one statement, with the times the test gives: many expired ones for retention to delete, or a
 * day's worth for the planner to weigh.
 */
export async function bulkInsertIdempotencyRecords(db: Db, records: readonly IdempotencyRow[]): Promise<void> {
  await bulk(
    db,
    `INSERT INTO idempotency_records (id, account_id, key, request_hash, response_status, response_body, created_at, expires_at)
     SELECT gen_random_uuid(), r.account_id, r.key, r.request_hash, r.response_status, r.response_body::jsonb, r.created_at, r.expires_at
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[])
            WITH ORDINALITY AS r(account_id, key, request_hash, response_status, response_body, created_at, expires_at, n)
      ORDER BY r.n`,
    [
      records.map((r) => r.accountId),
      records.map((r) => r.key),
      records.map((r) => r.requestHash ?? 'x'),
      records.map((r) => r.responseStatus ?? null),
      records.map((r) => r.responseBody ?? null),
      records.map((r) => r.createdAt),
      records.map((r) => r.expiresAt ?? r.createdAt),
    ],
  );
}
