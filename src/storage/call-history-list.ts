// The Calls list's pages: the calls of the accounts a viewer manages, newest first (keyset on (created_at, id)),
// filtered; a search's page from call-history-search.ts, else a walk of the newest calls (HISTORY), and a call
// searched by its id. Hand-written for their plans (each statement says why), on the pool.
import type { CallCursor, CallHistoryFilters, CallListRow, HistoryAccounts } from './call-history.js';
import { HeldCalls, passesHeld } from './call-history-held.js';
import { CallSearch, nameSearch } from './call-history-search.js';
import { BY_OWNER, NAME_MERGE_FIRST_MIN, SEARCH_PROBE_WALK_MIN } from './call-history-search-statements.js';
import { nameOnly, newestFirst, pageParameters, upperBound, wholeScope, type Owners } from './call-history-sql.js';
import { filterSet, HISTORY, OPTIONAL } from './call-history-walk.js';
import { SqlRepository, type PoolDriver } from './driver.js';
import { accountsSql, scopeValues } from './scope-where.js';
import { statement } from './statements.js';

// The accounts of an agency's scope ($1, $2: scopeValues) that placed a call at or before $3 (a time or 'infinity'):
// ownersOf's read, in the pool's own style (a first_call_at that is null is at no time).
const AGENCY_ACCOUNTS_CALLED = statement(
  'oct_call_history_agency_accounts',
  `SELECT a.id FROM accounts a WHERE ${accountsSql('a', 1)} AND a.first_call_at <= $3::timestamptz`,
);

/** The newest `count` of two pages each newest first (a call in both once), newest first. */
function mergedNewest(a: CallListRow[], b: CallListRow[], count: number): CallListRow[] {
  const seen = new Set(a.map((r) => r.id));
  return [...a, ...b.filter((r) => !seen.has(r.id))]
    .sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0))
    .slice(0, count);
}

/** A page of at most `limit` of `rows` (read one more than that), and the cursor of the next one when there is more. */
function pageOfRows(rows: CallListRow[], limit: number): { calls: CallListRow[]; next: CallCursor | null } {
  const calls = rows.slice(0, limit);
  const last = calls.at(-1);
  return { calls, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** A page of the Calls list, and a call found by its id in it. */
export class CallList extends SqlRepository {
  private readonly search: CallSearch;
  private readonly held: HeldCalls;

  constructor(driver: PoolDriver) {
    super(driver);
    this.search = new CallSearch(driver);
    this.held = new HeldCalls(driver);
  }

  /**
   * One page of the calls of `accounts`, newest first (ties on created_at by id), and the cursor of the next page
   * (null at the end). The cost does not grow with the page number nor the accounts' size: a search reads its own
   * index first (at most SEARCH_CANDIDATES_MAX calls), and only when it matches more walks the scope's calls in order.
   * Given an agency, its whole scope is one range of the agency_id indexes (ownersOf). The calls listed for the
   * accounts of `listedFor` are read the same way through their own indexes, beside (not after) the accounts' own,
   * and the two pages merged: each is the newest of its part below the bound, so the merge is the page.
   */
  async listCallHistory(
    query: HistoryAccounts & {
      filters: CallHistoryFilters;
      before?: CallCursor;
      limit: number;
    },
  ): Promise<{ calls: CallListRow[]; next: CallCursor | null }> {
    const { filters, before, limit } = query;
    const upper = upperBound(filters, before);
    const listed = 'listedFor' in query && query.listedFor?.length ? query.listedFor : null;
    const [own, listedRows] = await Promise.all([
      this.ownersOf(query, filters, upper).then((owners) => this.newestOf(owners, filters, upper, limit)),
      listed ? this.newestOf({ column: 'listed_for_account_id', ids: listed }, filters, upper, limit) : [],
    ]);
    return pageOfRows(listedRows.length ? mergedNewest(own, listedRows, limit + 1) : own, limit);
  }

  /** The newest `limit` + 1 calls of `owners` below `upper` that pass `filters` (listCallHistory's page, unsliced). */
  private async newestOf(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
  ): Promise<CallListRow[]> {
    const searching = filters.metadata !== null || filters.numberPrefix !== null || filters.namePrefix !== null;
    if (owners.ids.length === 0) return [];
    // Held calls only: their partial index holds a bounded few (waiting calls), every other filter applied to them.
    if (filters.held) return this.held.newestHeld(owners, filters, upper, limit + 1);
    let rows: CallListRow[] | null = null;
    if (searching) {
      // A name search alone is the merge of its names, whose reads are bounded by the names and the page whether the
      // name is common or rare: asked first, it answers with one statement. Not for a single letter, which starts
      // hundreds of names (the merge would list SEARCH_NAMES_MAX of them an account before it gives up) and which
      // the newest calls usually hold a page of. The probe comes after the merge only when it gives up (more names
      // than it merges, or a scope wider than it reads).
      const mergeFirst = nameOnly(filters) && [...filters.namePrefix!].length >= NAME_MERGE_FIRST_MIN;
      rows = mergeFirst ? await this.search.nameMerge(owners, nameSearch(owners, filters, upper, limit + 1)) : null;
      if (!rows) {
        const probe = await this.search.probePage(owners, filters, upper, limit + 1);
        // Matches enough of the newest calls that the walk meets a page soon: the index is not asked for every match
        // (it would hand over thousands first). But a single letter still asks for the merge of its names, whose
        // reads are bounded by the names and the page: the walk reads a page of matches from every account, 1 / share
        // calls each (15,000 rows for 5 accounts and a name 1 call in 60 has).
        rows =
          probe?.page ??
          (probe && probe.matched >= SEARCH_PROBE_WALK_MIN
            ? nameOnly(filters) && !mergeFirst
              ? await this.search.nameMerge(owners, nameSearch(owners, filters, upper, limit + 1))
              : null
            : await this.search.searchPage(owners, filters, upper, limit + 1, { merged: mergeFirst }));
      }
    }
    if (!rows) {
      const present = OPTIONAL.filter((f) => filterSet(filters, f.key));
      const statements = HISTORY.get(present.map((f) => f.key).join(','))!;
      // An agency's whole scope: one range. More accounts than rows asked for: each account's newest first bounds
      // what is read (historyStatement).
      const sql =
        owners.column === 'agency_id'
          ? statements.byAgency
          : owners.column === 'listed_for_account_id'
            ? statements.listed
            : owners.ids.length > limit + 1
              ? statements.wide
              : statements.narrow;
      const values: unknown[] = [
        owners.ids,
        upper.at,
        upper.id,
        filters.from ?? '-infinity',
        ...present.flatMap((f) => f.values(filters)),
        limit + 1,
      ];
      rows = await newestFirst<CallListRow>(this.pool, { ...sql, values });
    }
    return rows;
  }

  /**
   * Whose calls the statements read for `accounts` and `filters`: the accounts given; or, for an agency, the agency
   * by its calls' agency_id, a range of an (agency_id, ...) index whatever its number of clients. But for a filter
   * that only an account's index serves (an agent, whose calls are one account's; a number prefix; held calls), the agency's
   * accounts that can have a call at or before `upper` (first_call_at, kept by a trigger, at or before it): a client
   * that never placed a call is not searched, so an agency of a thousand quiet clients costs neither a thousand ids
   * nor a thousand index descents.
   */
  private async ownersOf(
    accounts: HistoryAccounts,
    filters: Pick<CallHistoryFilters, 'agentId' | 'numberPrefix' | 'held'>,
    upper: { at: Date | 'infinity' },
  ): Promise<Owners> {
    if ('accountIds' in accounts || (filters.agentId === null && filters.numberPrefix === null && !filters.held))
      return wholeScope(accounts);
    const { rows } = await this.pool.query<{ id: string }>({
      ...AGENCY_ACCOUNTS_CALLED,
      values: [...scopeValues({ accountId: accounts.agencyId, kind: 'agency' }), upper.at],
    });
    return { column: 'account_id', ids: rows.map((r) => r.id) };
  }

  /** The call `callId` when it is in the scope of `accounts` and passes the filters (a search by call id), else none. */
  async findCallInHistory(
    query: HistoryAccounts & {
      callId: string;
      filters: CallHistoryFilters;
    },
  ): Promise<CallListRow[]> {
    const { filters } = query;
    const upper = upperBound(filters);
    // The call's own row decides: one probe of the primary key, by its account or its agency, or by the client it is
    // listed for.
    const listed = 'listedFor' in query && query.listedFor?.length ? query.listedFor : null;
    const owners: Owners[] = [
      wholeScope(query),
      ...(listed ? [{ column: 'listed_for_account_id' as const, ids: listed }] : []),
    ];
    for (const { column, ids } of owners) {
      if (ids.length === 0) continue;
      const { rows } = await this.pool.query<CallListRow>({
        ...BY_OWNER[column].pageOf,
        values: [[query.callId], ids, ...pageParameters(filters, upper, 1)],
      });
      if (rows.length > 0) return rows.filter((row) => passesHeld(filters, row));
    }
    return [];
  }
}
