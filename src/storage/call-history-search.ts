// The Calls list's searches: which statement finds a search's page (its index's candidates, the probe of the newest
// calls, the merge of a name's matches) and when to give up and let the list walk the newest calls instead.
import type { CallHistoryFilters, CallListRow } from './call-history.js';
import {
  BY_OWNER,
  SEARCH_CANDIDATES_MAX,
  SEARCH_NAMES_MAX,
  SEARCH_PROBE_ACCOUNTS,
  SEARCH_PROBE_ROWS,
} from './call-history-search-statements.js';
import {
  containment,
  nameOnly,
  newestFirst,
  pageParameters,
  type NameSearchValues,
  type Owners,
} from './call-history-sql.js';
import { SqlRepository } from './driver.js';

/** The planner's setting for nameMerge, set in the transaction that runs it (nameMerge says why). */
const GENERIC_PLAN = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** A name search's values, as nameMerge and nameNewest take them. */
export function nameSearch(
  owners: Owners,
  filters: CallHistoryFilters,
  upper: { at: Date | 'infinity'; id: string },
  limit: number,
): NameSearchValues {
  return [owners.ids, filters.namePrefix, upper.at, upper.id, filters.from ?? '-infinity', limit];
}

/** A search's page, by its own index, the probe of the newest calls or the merge of a name's matches. */
export class CallSearch extends SqlRepository {
  /**
   * A search's look at the scope's newest SEARCH_PROBE_ROWS calls (SEARCH_PROBE_ROWS says why): `page` is the page
   * when it is among them (null when fewer than a page match there while older calls remain), `matched` how many of
   * them match. Null when no search is asked for or the scope is too wide.
   */
  async probePage(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
  ): Promise<{ page: CallListRow[] | null; matched: number } | null> {
    const searching = filters.metadata !== null || filters.numberPrefix !== null || filters.namePrefix !== null;
    if (!searching || owners.ids.length > SEARCH_PROBE_ACCOUNTS) return null;
    const [a, b] = filters.metadata ? containment(filters.metadata) : [null, null];
    const rows = await newestFirst<CallListRow & { seen: number }>(this.pool, {
      ...BY_OWNER[owners.column].probe,
      values: [
        owners.ids,
        upper.at,
        upper.id,
        filters.from ?? '-infinity',
        limit,
        SEARCH_PROBE_ROWS,
        filters.status,
        filters.agentId,
        filters.numberPrefix,
        filters.namePrefix,
        a,
        b,
        filters.outcome,
      ],
    });
    // The rows keep their `seen` column: nothing reads it past here.
    const page: CallListRow[] = rows.filter((r) => r.id !== null);
    const seen = rows[0]?.seen ?? 0;
    // A full page among the newest: it is the page. Fewer, but nothing older left to look at: so is that.
    return { page: page.length >= limit || seen < SEARCH_PROBE_ROWS ? page : null, matched: page.length };
  }

  /**
   * A name search's page as the merge of its names' newest matches (nameMerge); null when an owner has more than
   * SEARCH_NAMES_MAX names with the prefix (then nothing but the names was read), or the scope is wider than the
   * probe's.
   */
  async nameMerge(owners: Owners, search: NameSearchValues): Promise<CallListRow[] | null> {
    if (search[0].length > SEARCH_PROBE_ACCOUNTS) return null;
    const values = [...search, SEARCH_NAMES_MAX + 1];
    // In a generic plan: PostgreSQL would plan it afresh on every run (the custom plan, knowing the accounts and the
    // prefix, looks cheaper than the generic one, of the same shape), and planning it costs about what running it does.
    const rows = await this.transaction(async (client) => {
      await client.query(GENERIC_PLAN);
      return (await client.query<CallListRow & { names: number }>({ ...BY_OWNER[owners.column].nameMerge, values }))
        .rows;
    });
    // The rows keep their `names` column: nothing reads it past here.
    return (rows[0]?.names ?? 0) <= SEARCH_NAMES_MAX ? rows.filter((r) => r.id !== null) : null;
  }

  /**
   * A page of the calls a search's index finds (metadata first, then the number, then the name), when there are at
   * most SEARCH_CANDIDATES_MAX of them; null when no search is asked for, or when it matches more. A name search with
   * no other filter has no cap: the merge of its names' newest matches (nameMerge), else every match read from its
   * index alone.
   */
  async searchPage(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
    tried: { merged: boolean } = { merged: false },
  ): Promise<CallListRow[] | null> {
    const statements = BY_OWNER[owners.column];
    if (nameOnly(filters)) {
      const search = nameSearch(owners, filters, upper, limit);
      const merged = tried.merged ? null : await this.nameMerge(owners, search);
      if (merged) return merged;
      // The merge of its names gave up: every match is read.
      const { rows } = await this.pool.query<CallListRow>({ ...statements.nameNewest, values: search });
      return rows;
    }
    const [sql, own] = filters.metadata
      ? [statements.searches.metadata, containment(filters.metadata)]
      : filters.numberPrefix !== null
        ? [statements.searches.numberPrefix, [filters.numberPrefix]]
        : filters.namePrefix !== null
          ? [statements.searches.namePrefix, [filters.namePrefix]]
          : [undefined, []];
    if (!sql) return null;
    const { rows } = await this.pool.query<CallListRow & { matched: number }>({
      ...sql,
      values: [owners.ids, ...own, ...pageParameters(filters, upper, limit)],
    });
    if ((rows[0]?.matched ?? 0) > SEARCH_CANDIDATES_MAX) return null;
    return rows.filter((r) => r.id !== null);
  }
}
