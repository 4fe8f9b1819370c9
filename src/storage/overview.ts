// What the dashboard's Overview reads besides the live counts (plugins/concurrency.ts): the accounts it may show, the
// outcomes of the calls that ended today in the viewer's zone (from counters the triggers on calls keep), each webhook
// endpoint's health, the first-run checklist and the calls the calling rules hold. Each is an index range over a few recent rows (the counters; an endpoint's newest
// success and its deliveries that failed lately), never a count of an account's history or of its day, and each one
// statement whatever the number of accounts (an agency may have thousands of clients): all four are hand-written for
// that (their statements say why).
import { FAILURE_REASONS, type FailureReason } from '../../schemas/vocabulary.js';
import type { Scope } from '../domain/tenancy.js';
import { DAY_OUTCOMES, type DayOutcome } from './overview-chart.js';
import { ENDPOINT_HEALTH, FIRST_RUN, HELD, OUTCOMES, RANKED } from './overview-statements.js';
import { todayTerms, type TodaySoFar } from './overview-today.js';
import { scopeValues } from './scope-where.js';
import { SqlRepository } from './driver.js';

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

const REASONS: ReadonlySet<string> = new Set(FAILURE_REASONS);
const isFailureReason = (outcome: string): outcome is FailureReason => REASONS.has(outcome);

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
  /** An agency scope has switched its calling rules on (always false for a client's scope, which has none). */
  callingRules: boolean;
}

/** The waiting calls the calling rules hold: all, and of them those over a cap per number. */
export interface HeldCalls {
  held: number;
  capped: number;
}

/** An account an Overview shows (RANKED), with its calls under way (active and waiting) when it was ranked. */
export interface RankedAccount extends OverviewAccount {
  underWay: number;
}

export type { DayOutcome } from './overview-chart.js';
export type { TodaySoFar } from './overview-today.js';
export { AGENT_OUTCOME_PREFIX } from './overview-chart.js';

export class OverviewRepository extends SqlRepository {
  /**
   * The calls of `scope` that ended on each UTC day from `first` to `last` (both YYYY-MM-DD, within the counters' 31
   * days), by outcome; days and outcomes without calls are absent. A completed call with a runtime's label counts
   * under 'completed' and under 'agent:<label>' (AGENT_OUTCOME_PREFIX).
   */
  async outcomesByDay(scope: Scope, first: string, last: string): Promise<DayOutcome[]> {
    const { rows } = await this.pool.query<DayOutcome>({
      ...DAY_OUTCOMES[scope.kind],
      values: [scope.accountId, first, last],
    });
    return rows;
  }

  /**
   * Per account, its calls that ended from `today.from` to `today.to`: completed, and failed by reason. Accounts with
   * none are absent. A local day of the last 24 hours only (the quarter counters keep 48 hours).
   */
  async outcomesOfDay(accountIds: string[], today: TodaySoFar): Promise<Map<string, Outcomes>> {
    const { days, quarters } = todayTerms(today);
    const { rows } = await this.pool.query<{ account_id: string; outcome: string; calls: number }>({
      ...OUTCOMES,
      values: [accountIds, days?.first, days?.last, quarters.from, quarters.until, quarters.sign],
    });
    const result = new Map<string, Outcomes>();
    for (const row of rows) {
      const outcomes = result.get(row.account_id) ?? noOutcomes();
      if (row.outcome === 'completed') outcomes.completed += row.calls;
      else if (isFailureReason(row.outcome)) outcomes.failed[row.outcome] += row.calls;
      result.set(row.account_id, outcomes);
    }
    return result;
  }

  /** Per account with a webhook endpoint, its health; accounts without one are absent. */
  async endpointHealth(accountIds: string[], since: Date): Promise<Map<string, EndpointHealth>> {
    const { rows } = await this.pool.query<{
      account_id: string;
      url: string;
      enabled: boolean;
      disabled_reason: string | null;
      last_success_at: Date | null;
      failures: number;
    }>({ ...ENDPOINT_HEALTH, values: [accountIds, since] });
    return new Map(
      rows.map((r) => [
        r.account_id,
        {
          url: r.url,
          enabled: r.enabled,
          disabledReason: r.disabled_reason,
          lastSuccessAt: r.last_success_at,
          failuresSince: r.failures,
        },
      ]),
    );
  }

  /**
   * The accounts of `scope` its Overview shows (RANKED), its own first, then at most `clients` clients, those with the
   * most to see first (by name when all fit); how many accounts `scope` has, and how many of them have calls under way.
   * The outcomes that count are those of `today` (the viewer's local day so far); an endpoint is failing with a failed
   * attempt since `since`.
   */
  async rankedAccounts(
    scope: Scope,
    clients: number,
    today: TodaySoFar,
    since: Date,
  ): Promise<{ accounts: RankedAccount[]; total: number; underWay: number }> {
    const { days, quarters } = todayTerms(today);
    const { rows } = await this.pool.query<{
      id: string;
      name: string;
      kind: 'agency' | 'client';
      under_way: number;
      total: number;
      under_way_total: number;
    }>({
      ...RANKED,
      values: [
        ...scopeValues(scope),
        clients,
        days?.first,
        since,
        days?.last,
        quarters.from,
        quarters.until,
        quarters.sign,
      ],
    });
    return {
      accounts: rows.map((r) => ({ id: r.id, name: r.name, kind: r.kind, underWay: r.under_way })),
      total: rows[0]?.total ?? 0,
      underWay: rows[0]?.under_way_total ?? 0,
    };
  }

  /**
   * The first-run checklist of the accounts a viewer sees (an agency's steps may be taken by it or by its clients):
   * five EXISTS in one statement, each on an index (accounts by id and agency, agents, keys, endpoints and calls by
   * account), and an agency's calling rules (its own row).
   */
  async firstRun(scope: Scope): Promise<FirstRun> {
    const { rows } = await this.pool.query<{
      agent_with_number: boolean;
      default_agent: boolean;
      api_key: boolean;
      webhook: boolean;
      first_call: boolean;
      calling_rules: boolean;
    }>({ ...FIRST_RUN, values: scopeValues(scope) });
    const row = rows[0]!;
    return {
      agentWithNumber: row.agent_with_number,
      defaultAgent: row.default_agent,
      apiKey: row.api_key,
      webhook: row.webhook,
      firstCall: row.first_call,
      callingRules: row.calling_rules,
    };
  }

  /** The waiting calls of `scope` its calling rules hold (calls.held_by), counted from the partial index calls_held. */
  async heldCalls(scope: Scope): Promise<HeldCalls> {
    const { rows } = await this.pool.query<{ held: number; capped: number }>({
      ...HELD,
      values: scopeValues(scope),
    });
    return { held: rows[0]!.held, capped: rows[0]!.capped };
  }
}
