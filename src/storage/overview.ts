// What the dashboard's Overview reads besides the live counts (plugins/concurrency.ts): the accounts it covers, the
// outcomes of calls that ended in a time range, and each webhook endpoint's health. Each is an index range over the
// recent rows only (calls by (account_id, ended_at); deliveries by (endpoint_id, status, last_attempt_at)), never
// a count of an account's history. Prisma Client only.
import {
  DELIVERY_STATUSES,
  FAILURE_REASONS,
  TERMINAL_STATUSES,
  type FailureReason,
} from '../domain/call-vocabulary.js';
import type { Db } from './db-types.js';
import { sqlPool, type PrismaClient } from './database.js';
import { statement } from './statements.js';

export interface OverviewAccount {
  id: string;
  name: string;
  kind: 'agency' | 'client';
}

/** The agency, then its clients by name. */
export async function agencyAndClients(db: Db, agencyId: string): Promise<OverviewAccount[]> {
  const [agency, clients] = await Promise.all([
    db.account.findUnique({ where: { id: agencyId }, select: { id: true, name: true, kind: true } }),
    db.account.findMany({
      where: { agencyId },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true, kind: true },
    }),
  ]);
  return agency ? [agency, ...clients] : clients;
}

export interface Outcomes {
  completed: number;
  /** Every failure reason, zero included. */
  failed: Record<FailureReason, number>;
}

export function noOutcomes(): Outcomes {
  return {
    completed: 0,
    failed: Object.fromEntries(FAILURE_REASONS.map((r) => [r, 0])) as Record<FailureReason, number>,
  };
}

/** Per account, the calls that ended in [from, to): completed, and failed by reason. Accounts with none are absent. */
export async function outcomesBetween(
  db: Db,
  accountIds: string[],
  from: Date,
  to: Date,
): Promise<Map<string, Outcomes>> {
  const groups = await db.call.groupBy({
    by: ['accountId', 'status', 'failureReason'],
    where: { accountId: { in: accountIds }, endedAt: { gte: from, lt: to }, status: { in: [...TERMINAL_STATUSES] } },
    _count: { _all: true },
  });
  const result = new Map<string, Outcomes>();
  for (const group of groups) {
    const outcomes = result.get(group.accountId) ?? noOutcomes();
    if (group.status === 'completed') outcomes.completed += group._count._all;
    else if (group.failureReason) outcomes.failed[group.failureReason] += group._count._all;
    result.set(group.accountId, outcomes);
  }
  return result;
}

export interface EndpointHealth {
  url: string;
  enabled: boolean;
  disabledReason: string | null;
  /** When a delivery last succeeded (its successful attempt began); null: never. */
  lastSuccessAt: Date | null;
  /** Attempts since `since` that got no 2xx (an error, a timeout or another status). */
  failuresSince: number;
}

/**
 * Attempts since `since` that got no 2xx. Every delivery attempted since `since` has its last attempt since then: the
 * (endpoint_id, status, last_attempt_at) index range of each status, then their attempts. Hand-written and planned
 * each time: with `since` unknown a prepared (generic) plan guessed a third of all attempts and read the whole table.
 */
const FAILED_ATTEMPTS_SINCE = statement(
  'oct_overview_failed_attempts',
  `
  SELECT count(*)::int AS failures FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
   WHERE d.endpoint_id = $1 AND d.status = ANY($2::delivery_status[]) AND d.last_attempt_at >= $3
     AND a.started_at >= $3 AND (a.response_status IS NULL OR a.response_status < 200 OR a.response_status >= 300)`,
  { planEachTime: true },
);

async function failedAttemptsSince(prisma: PrismaClient, endpointId: string, since: Date): Promise<number> {
  const { rows } = await sqlPool(prisma).query<{ failures: number }>({
    ...FAILED_ATTEMPTS_SINCE,
    values: [endpointId, DELIVERY_STATUSES, since],
  });
  return rows[0]!.failures;
}

/** Per account with a webhook endpoint, its health; accounts without one are absent. */
export async function endpointHealth(
  db: PrismaClient,
  accountIds: string[],
  since: Date,
): Promise<Map<string, EndpointHealth>> {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { accountId: { in: accountIds } },
    select: { id: true, accountId: true, url: true, enabled: true, disabledReason: true },
  });
  const health = await Promise.all(
    endpoints.map(async (endpoint) => {
      const [lastSuccess, failures] = await Promise.all([
        // The last entry of the (endpoint_id, succeeded) index range. (Prisma's aggregate() wraps max() in a subquery
        // that PostgreSQL cannot answer from the index: it would read every success.)
        db.webhookDelivery.findFirst({
          where: { endpointId: endpoint.id, status: 'succeeded', lastAttemptAt: { not: null } },
          orderBy: { lastAttemptAt: 'desc' },
          select: { lastAttemptAt: true },
        }),
        failedAttemptsSince(db, endpoint.id, since),
      ]);
      const entry: EndpointHealth = {
        url: endpoint.url,
        enabled: endpoint.enabled,
        disabledReason: endpoint.disabledReason,
        lastSuccessAt: lastSuccess?.lastAttemptAt ?? null,
        failuresSince: failures,
      };
      return [endpoint.accountId, entry] as const;
    }),
  );
  return new Map(health);
}
