// The dashboard's reads of call history: a page of the calls of the accounts a viewer manages (newest first, keyset on
// (created_at, id), filtered), one call with its events and its webhook deliveries and their attempts, and the
// accounts and agents the filters offer. Read-only.
import type { Call, PrismaClient } from '../generated/prisma/client.js';
import type { CallStatus, DeliveryStatus, FailureReason } from '../domain/call-vocabulary.js';
import { sqlPool } from './database.js';
import { statement, type Statement } from './statements.js';
import type { Db } from './db-types.js';

/** Which calls: every filter that is not null must hold. */
export interface CallHistoryFilters {
  status: CallStatus | null;
  agentId: string | null;
  /** The destination number, exactly (E.164). */
  phoneNumber: string | null;
  /** Created at or after. */
  from: Date | null;
  /** Created before. */
  to: Date | null;
}

/** Where a page starts: the call before which (newest first) the next page begins. */
export interface CallCursor {
  createdAt: Date;
  id: string;
}

/** A call as the list shows it. */
export interface CallListRow {
  id: string;
  accountId: string;
  agentId: string;
  phoneNumber: string;
  status: CallStatus;
  failureReason: FailureReason | null;
  durationSeconds: number | null;
  createdAt: Date;
}

const LIST_COLUMNS = `c.id, c.account_id AS "accountId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber",
  c.status::text AS status, c.failure_reason::text AS "failureReason", c.duration_seconds AS "durationSeconds", c.created_at AS "createdAt"`;

/** The optional equality filters, in the order their parameters follow $1-$4. */
const OPTIONAL = [
  { key: 'status', sql: 'c.status = $::call_status' },
  { key: 'agentId', sql: 'c.agent_id = $::uuid' },
  { key: 'phoneNumber', sql: 'c.phone_number = $::text' },
] as const;

type OptionalKey = (typeof OPTIONAL)[number]['key'];

// Hand-written: Prisma's `account_id IN (...) ORDER BY created_at DESC, id DESC` makes PostgreSQL sort every matching
// row of the accounts (a million for a big one); a LATERAL top-N per account reads at most a page from each account's
// index in order. One text per combination of the equality filters, so that each is an index condition in a prepared
// (generic) plan too; the date range and the cursor are always present (unbounded: ±infinity), as one row comparison.
function historyStatement(present: readonly OptionalKey[]): Statement {
  let n = 4;
  const extra = OPTIONAL.filter((f) => present.includes(f.key))
    .map((f) => `\n        AND ${f.sql.replace('$', () => `$${++n}`)}`)
    .join('');
  const name = ['oct_call_history', ...present.map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))].join('_');
  return statement(
    name,
    `
  SELECT p.*
    FROM unnest($1::uuid[]) AS a(id)
   CROSS JOIN LATERAL (
     SELECT ${LIST_COLUMNS} FROM calls c
      WHERE c.account_id = a.id
        AND (c.created_at, c.id) < ($2::timestamptz, $3::uuid)
        AND c.created_at >= $4::timestamptz${extra}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT $${n + 1}::int) AS p
   ORDER BY p."createdAt" DESC, p.id DESC
   LIMIT $${n + 1}::int`,
  );
}

/** Every combination of the optional filters, keyed by their names joined with ','. */
const HISTORY: Map<string, Statement> = new Map(
  [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => {
    const present = OPTIONAL.filter((_, i) => mask & (1 << i)).map((f) => f.key);
    return [present.join(','), historyStatement(present)] as const;
  }),
);

const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
const MIN_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * One page of the calls of `accountIds`, newest first (ties on created_at by id), and the cursor of the next page
 * (null at the end). The cost does not grow with the page number nor the accounts' size.
 */
export async function listCallHistory(
  prisma: PrismaClient,
  query: { accountIds: string[]; filters: CallHistoryFilters; before?: CallCursor; limit: number },
): Promise<{ calls: CallListRow[]; next: CallCursor | null }> {
  const { accountIds, filters, before, limit } = query;
  if (accountIds.length === 0) return { calls: [], next: null };
  // The upper bound is the cursor or the range's end (created_at < to is (created_at, id) < (to, the least uuid)),
  // whichever comes first.
  let upper: { at: Date | 'infinity'; id: string } = before
    ? { at: before.createdAt, id: before.id }
    : { at: 'infinity', id: MAX_UUID };
  if (filters.to && (upper.at === 'infinity' || filters.to.getTime() <= upper.at.getTime()))
    upper = { at: filters.to, id: MIN_UUID };
  const present = OPTIONAL.filter((f) => filters[f.key] !== null);
  const sql = HISTORY.get(present.map((f) => f.key).join(','))!;
  const values: unknown[] = [
    accountIds,
    upper.at,
    upper.id,
    filters.from ?? '-infinity',
    ...present.map((f) => filters[f.key]),
    limit + 1,
  ];
  const { rows } = await sqlPool(prisma).query<CallListRow>({ ...sql, values });
  const calls = rows.slice(0, limit);
  const last = calls.at(-1);
  return { calls, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** The call `callId` when it is one of `accountIds`' and passes the filters (a search by call id), else none. */
export async function findCallInHistory(
  prisma: PrismaClient,
  query: { accountIds: string[]; callId: string; filters: CallHistoryFilters },
): Promise<CallListRow[]> {
  const { filters } = query;
  const call = await prisma.call.findFirst({
    where: {
      id: query.callId,
      accountId: { in: query.accountIds },
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.agentId ? { agentId: filters.agentId } : {}),
      ...(filters.phoneNumber ? { phoneNumber: filters.phoneNumber } : {}),
      ...(filters.from || filters.to
        ? { createdAt: { ...(filters.from ? { gte: filters.from } : {}), ...(filters.to ? { lt: filters.to } : {}) } }
        : {}),
    },
    select: {
      id: true,
      accountId: true,
      agentId: true,
      phoneNumber: true,
      status: true,
      failureReason: true,
      durationSeconds: true,
      createdAt: true,
    },
  });
  return call ? [call] : [];
}

/** The accounts a viewer manages, their own first: an agency's clients by name, or the client alone. */
export async function accountsOfViewer(db: Db, viewer: { accountId: string; accountKind: 'agency' | 'client' }) {
  const accounts = await db.account.findMany({
    where:
      viewer.accountKind === 'agency'
        ? { OR: [{ id: viewer.accountId }, { agencyId: viewer.accountId }] }
        : { id: viewer.accountId },
    select: { id: true, name: true, kind: true },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
  });
  return [...accounts.filter((a) => a.id === viewer.accountId), ...accounts.filter((a) => a.id !== viewer.accountId)];
}

/** The agents of the accounts a viewer manages (every agent their calls can use), by name. */
export async function agentsOfViewer(db: Db, viewer: { accountId: string; accountKind: 'agency' | 'client' }) {
  return db.agent.findMany({
    // An agent's agency_id is the agency at the top of its owner: an agency's and all its clients' agents.
    where: viewer.accountKind === 'agency' ? { agencyId: viewer.accountId } : { accountId: viewer.accountId },
    select: { id: true, name: true, accountId: true },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
  });
}

// Hand-written: the metadata's text as stored (`json` keeps the client's key order); Prisma Client parses it into an
// object, which moves integer-like keys ("2", "10") first.
const METADATA_TEXT = statement(
  'oct_call_history_metadata',
  'SELECT metadata::text AS metadata FROM calls WHERE id = $1::uuid',
);

/** A call with everything its detail view shows; `metadata` is its JSON text as the client wrote it. */
export type CallDetail = Omit<Call, 'metadata'> & {
  metadata: string;
  account: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null };
  agent: { id: string; name: string };
  events: {
    id: string;
    fromStatus: CallStatus | null;
    toStatus: CallStatus;
    failureReason: FailureReason | null;
    source: string;
    occurredAt: Date;
  }[];
  deliveries: {
    id: string;
    callEventId: string;
    eventType: string;
    status: DeliveryStatus;
    /** Why it is held (status held), else null. */
    heldReason: string | null;
    attemptCount: number;
    nextAttemptAt: Date;
    createdAt: Date;
    endpointId: string;
    attempts: {
      id: string;
      attemptNumber: number;
      startedAt: Date;
      durationMs: number;
      responseStatus: number | null;
      error: string | null;
    }[];
  }[];
};

/** One call with its account, agent, events (oldest first), deliveries and their attempts; null when none. */
export async function findCallDetail(prisma: PrismaClient, callId: string): Promise<CallDetail | null> {
  const [call, text] = await Promise.all([
    prisma.call.findUnique({
      where: { id: callId },
      omit: { metadata: true },
      include: {
        account: { select: { id: true, name: true, kind: true, agencyId: true } },
        agent: { select: { id: true, name: true } },
        events: { orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] },
        deliveries: {
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          select: {
            id: true,
            callEventId: true,
            eventType: true,
            status: true,
            heldReason: true,
            attemptCount: true,
            nextAttemptAt: true,
            createdAt: true,
            endpointId: true,
            attempts: {
              orderBy: { attemptNumber: 'asc' },
              select: {
                id: true,
                attemptNumber: true,
                startedAt: true,
                durationMs: true,
                responseStatus: true,
                error: true,
              },
            },
          },
        },
      },
    }),
    sqlPool(prisma).query<{ metadata: string }>({ ...METADATA_TEXT, values: [callId] }),
  ]);
  if (!call) return null;
  return { ...call, metadata: text.rows[0]?.metadata ?? '{}' };
}
