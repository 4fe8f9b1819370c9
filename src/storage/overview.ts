// What the dashboard's Overview reads besides the live counts (plugins/concurrency.ts): the accounts it covers, the
// outcomes of calls that ended in a time range, each webhook endpoint's health, and the first-run checklist. Each is an index range over the
// recent rows only (calls by (account_id, ended_at); deliveries by (endpoint_id, status, last_attempt_at)), never
// a count of an account's history. Prisma Client only.
import { DELIVERY_STATUSES, FAILURE_REASONS, TERMINAL_STATUSES, type FailureReason } from '../../schemas/vocabulary.js';
import type pg from 'pg';
import { statement } from './statements.js';
import { Repository } from './driver.js';

export interface OverviewAccount {
  id: string;
  name: string;
  kind: 'agency' | 'client';
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

export interface EndpointHealth {
  url: string;
  enabled: boolean;
  disabledReason: string | null;
  /** When a delivery last succeeded (its successful attempt began); null: never. */
  lastSuccessAt: Date | null;
  /** Attempts since `since` that got no 2xx (an error, a timeout or another status). */
  failuresSince: number;
}

/** The first-run checklist: which of the five steps to a first call some account of a scope has taken. */
export interface FirstRun {
  /** An agent has a phone number (caller ID). */
  agentWithNumber: boolean;
  /** An account has a default agent. */
  defaultAgent: boolean;
  /** An account has an active API key. */
  apiKey: boolean;
  /** An account has a webhook endpoint. */
  webhook: boolean;
  /** An account has a call. */
  firstCall: boolean;
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

/**
 * Whether any of the accounts has a call: the newest entry of each account's (account_id, created_at, id) index range
 * until one is found. Hand-written: Prisma's `account_id IN (...) LIMIT 1` was planned as a sequential scan.
 */
const ANY_CALL = statement(
  'oct_overview_any_call',
  `
  SELECT 1 AS found FROM unnest($1::uuid[]) AS a(id)
   CROSS JOIN LATERAL (SELECT 1 FROM calls c WHERE c.account_id = a.id ORDER BY c.created_at DESC, c.id DESC LIMIT 1) x
   LIMIT 1`,
);

async function failedAttemptsSince(pool: pg.Pool, endpointId: string, since: Date): Promise<number> {
  const { rows } = await pool.query<{ failures: number }>({
    ...FAILED_ATTEMPTS_SINCE,
    values: [endpointId, DELIVERY_STATUSES, since],
  });
  return rows[0]!.failures;
}

export class OverviewRepository extends Repository {
  /** Per account, the calls that ended in [from, to): completed, and failed by reason. Accounts with none are absent. */
  async outcomesBetween(accountIds: string[], from: Date, to: Date): Promise<Map<string, Outcomes>> {
    const groups = await this.prisma.call.groupBy({
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

  /** Per account with a webhook endpoint, its health; accounts without one are absent. */
  async endpointHealth(accountIds: string[], since: Date): Promise<Map<string, EndpointHealth>> {
    const endpoints = await this.prisma.webhookEndpoint.findMany({
      where: { accountId: { in: accountIds } },
      select: { id: true, accountId: true, url: true, enabled: true, disabledReason: true },
    });
    const health = await Promise.all(
      endpoints.map(async (endpoint) => {
        const [lastSuccess, failures] = await Promise.all([
          // The last entry of the (endpoint_id, succeeded) index range. (Prisma's aggregate() wraps max() in a subquery
          // that PostgreSQL cannot answer from the index: it would read every success.)
          this.prisma.webhookDelivery.findFirst({
            where: { endpointId: endpoint.id, status: 'succeeded', lastAttemptAt: { not: null } },
            orderBy: { lastAttemptAt: 'desc' },
            select: { lastAttemptAt: true },
          }),
          failedAttemptsSince(this.pool, endpoint.id, since),
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

  /**
   * The first-run checklist of the accounts a viewer sees (an agency's steps may be taken by it or by its clients):
   * five single-row reads, each on an index (accounts by id, agents, keys, endpoints and calls by account).
   */
  async firstRun(accountIds: string[]): Promise<FirstRun> {
    const accountId = { in: accountIds };
    const [agent, account, key, endpoint, call] = await Promise.all([
      this.prisma.agent.findFirst({ where: { accountId, phoneNumber: { not: null } }, select: { id: true } }),
      this.prisma.account.findFirst({ where: { id: accountId, defaultAgentId: { not: null } }, select: { id: true } }),
      this.prisma.apiKey.findFirst({ where: { accountId, revokedAt: null }, select: { id: true } }),
      this.prisma.webhookEndpoint.findFirst({ where: { accountId }, select: { id: true } }),
      this.pool.query<{ found: number }>({ ...ANY_CALL, values: [accountIds] }),
    ]);
    return {
      agentWithNumber: agent !== null,
      defaultAgent: account !== null,
      apiKey: key !== null,
      webhook: endpoint !== null,
      firstCall: call.rows.length > 0,
    };
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
