// What the Calls list's statements share (call-history-list.ts, call-history-search.ts): whose calls a statement
// reads, the list's columns, a page's bounds and parameters, and the planner's settings for a read newest first.
import type pg from 'pg';
import type { CallCursor, CallHistoryFilters, HistoryAccounts, MetadataMatch } from './call-history.js';
import { inTransaction } from './transaction.js';

/**
 * The column a statement finds its scope's calls by: the accounts given (account_id), or an agency's whole scope
 * (agency_id: the agency at the top of each call's account, kept by a trigger, migration 20261129100000), one range
 * of the (agency_id, ...) indexes rather than one per client.
 */
export type Owner = 'account_id' | 'agency_id' | 'listed_for_account_id';

/** Whose calls a statement reads: the ids of `column` ($1). */
export interface Owners {
  column: Owner;
  ids: string[];
}

/** The whole scope of `accounts` by its own column: the accounts given, or the agency by its calls' agency_id. */
export function wholeScope(accounts: HistoryAccounts): Owners {
  return 'accountIds' in accounts
    ? { column: 'account_id', ids: accounts.accountIds }
    : { column: 'agency_id', ids: [accounts.agencyId] };
}

/**
 * A statement's name for `owner`: the agency's twin of a statement carries `_by_agency`, the twin over the calls listed
 * for a client (calls.listed_for_account_id, read through partial indexes twin to the account's) `_listed`.
 */
export function ownerName(name: string, owner: Owner): string {
  return owner === 'agency_id' ? `${name}_by_agency` : owner === 'listed_for_account_id' ? `${name}_listed` : name;
}

export const LIST_COLUMNS = `c.id, c.account_id AS "accountId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber", c.name,
  c.status::text AS status, c.failure_reason::text AS "failureReason", c.duration_seconds AS "durationSeconds", c.created_at AS "createdAt",
  c.started_at AS "startedAt", c.not_before AS "notBefore", c.next_attempt_at AS "nextAttemptAt", c.scheduled_at AS "scheduledAt",
  c.attempt, c.timezone, jsonb_array_length(c.attempt_outcomes)::int AS "attemptsEnded",
  c.attempt_outcomes AS "attemptOutcomes", c.answered_by::text AS "answeredBy", c.timezone_source::text AS "timezoneSource",
  c.listed_for_account_id AS "listedForAccountId", c.outcome, c.held_by AS "heldBy",
  CASE WHEN c.held_by IS NOT NULL THEN c.compliance -> -1 -> 'reasons' ->> 0 END AS "heldReason"`;

/** The metadata containment's two values: `{"key": value}` for each value that counts (the same twice for one). */
export function containment(match: MetadataMatch): [string, string] {
  const [a, b = a] = match.values;
  return [JSON.stringify({ [match.key]: a }), JSON.stringify({ [match.key]: b })];
}

export const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
/** A name search's values, as nameNewest and nameMerge take them: owners, prefix, upper bound, from, limit. */
export type NameSearchValues = [string[], string | null, Date | 'infinity', string, Date | '-infinity', number];
export const MIN_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * The planner's settings for the statements that read accounts' calls newest first (HISTORY and probe), set in the
 * transaction that runs one. Each is meant to read a page (or SEARCH_PROBE_ROWS) of each account's calls in order
 * from the (account_id, created_at, id) index. But the planner takes any account for an average one and a search's
 * predicate for one row in 200; where it then expects fewer rows than it asks for, it prefers to read every call of
 * the account and sort them: hundreds of milliseconds for 20,000 calls, seconds for a million. With sorts off (the
 * statement's last one, of at most a page from each account, has no alternative and stays), the ordered scan is the
 * plan whatever the estimates. JIT off: before PostgreSQL 18 a disabled sort is priced at 10^10, which would have
 * every such statement compiled.
 */
const NEWEST_FIRST = 'SET LOCAL enable_sort = off; SET LOCAL jit = off';

/**
 * A name search with no other filter than the dates: its index answers it alone (nameMerge, else nameNewest),
 * whatever the number of matches. The other filters need each match's row, so those searches keep the candidates' cap.
 */
export function nameOnly(filters: CallHistoryFilters): boolean {
  return (
    filters.namePrefix !== null &&
    filters.status === null &&
    filters.agentId === null &&
    filters.numberPrefix === null &&
    filters.metadata === null &&
    filters.outcome === null
  );
}

/**
 * The upper bound of a page: the cursor or the range's end (created_at < to is (created_at, id) < (to, the least
 * uuid)), whichever comes first.
 */
export function upperBound(filters: CallHistoryFilters, before?: CallCursor): { at: Date | 'infinity'; id: string } {
  let upper: { at: Date | 'infinity'; id: string } = before
    ? { at: before.createdAt, id: before.id }
    : { at: 'infinity', id: MAX_UUID };
  if (filters.to && (upper.at === 'infinity' || filters.to.getTime() <= upper.at.getTime()))
    upper = { at: filters.to, id: MIN_UUID };
  return upper;
}

/**
 * A page's parameters as the search statements and pageOf take them, after their own: the upper bound (time, id),
 * the lower time, status, agent, number prefix, name prefix, the two metadata containments (null: not asked), the
 * outcome, limit.
 */
export function pageParameters(
  filters: CallHistoryFilters,
  upper: { at: Date | 'infinity'; id: string },
  limit: number,
): unknown[] {
  const [a, b] = filters.metadata ? containment(filters.metadata) : [null, null];
  return [
    upper.at,
    upper.id,
    filters.from ?? '-infinity',
    filters.status,
    filters.agentId,
    filters.numberPrefix,
    filters.namePrefix,
    a,
    b,
    filters.outcome,
    limit,
  ];
}

/** Runs one of the statements that read a scope's calls newest first, with NEWEST_FIRST's planner settings. */
export async function newestFirst<R extends pg.QueryResultRow>(pool: pg.Pool, query: pg.QueryConfig): Promise<R[]> {
  return inTransaction(pool, async (client) => {
    await client.query(NEWEST_FIRST);
    return (await client.query<R>(query)).rows;
  });
}
