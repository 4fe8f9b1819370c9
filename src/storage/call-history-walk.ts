// The Calls list's walk as statements: the accounts' newest calls in order, one text per combination of the optional
// filters (HISTORY), by account, by agency and by the client calls are listed for.
import type { CallHistoryFilters } from './call-history.js';
import { containment, LIST_COLUMNS, ownerName, type Owner } from './call-history-sql.js';
import { statement, type Statement } from './statements.js';

/**
 * The optional filters, in the order their parameters follow $1-$4. The equality ones are index conditions; the
 * searches are written so that no index serves them here (a function, not the operator): this walk is taken only
 * when a search matches many calls, and then reading the account's newest calls in order finds a page soonest (see
 * NEWEST_FIRST for how the planner is held to that).
 */
export const OPTIONAL = [
  {
    key: 'status',
    sql: ([a]: string[]) => `c.status = ${a}::call_status`,
    values: (f: CallHistoryFilters) => [f.status],
  },
  { key: 'agentId', sql: ([a]: string[]) => `c.agent_id = ${a}::uuid`, values: (f: CallHistoryFilters) => [f.agentId] },
  {
    key: 'numberPrefix',
    sql: ([a]: string[]) => `left(c.phone_number, char_length(${a}::text)) = ${a}::text`,
    values: (f: CallHistoryFilters) => [f.numberPrefix],
  },
  {
    key: 'namePrefix',
    sql: ([a]: string[]) => `left(lower(c.name), char_length(${a}::text)) = lower(${a}::text)`,
    values: (f: CallHistoryFilters) => [f.namePrefix],
  },
  {
    key: 'metadata',
    sql: ([a, b]: string[]) =>
      `(jsonb_contains(c.metadata::jsonb, ${a}::jsonb) OR jsonb_contains(c.metadata::jsonb, ${b}::jsonb))`,
    values: (f: CallHistoryFilters) => (f.metadata ? containment(f.metadata) : [null, null]),
  },
  {
    // An index condition: the partial (account_id | agency_id, outcome, created_at, id) indexes of calls with one.
    key: 'outcome',
    sql: ([a]: string[]) => `c.outcome = ${a}::text`,
    values: (f: CallHistoryFilters) => [f.outcome],
  },
] as const;

export type OptionalKey = (typeof OPTIONAL)[number]['key'];
const PARAMS: Record<OptionalKey, number> = {
  status: 1,
  agentId: 1,
  numberPrefix: 1,
  namePrefix: 1,
  metadata: 2,
  outcome: 1,
};

// Hand-written: Prisma's `account_id IN (...) ORDER BY created_at DESC, id DESC` makes PostgreSQL sort every matching
// row of the accounts (a million for a big one); a LATERAL top-N per account reads at most a page from each account's
// index in order. One text per combination of the optional filters, so that each is an index condition in a prepared
// (generic) plan too; the date range and the cursor are always present (unbounded: ±infinity), as one row comparison.
function historyStatement(present: readonly OptionalKey[]): {
  narrow: Statement;
  wide: Statement;
  byAgency: Statement;
  listed: Statement;
} {
  let n = 4;
  const extra = OPTIONAL.filter((f) => present.includes(f.key))
    .map((f) => `\n        AND ${f.sql(Array.from({ length: PARAMS[f.key] }, () => `$${++n}`))}`)
    .join('');
  const limit = `$${n + 1}::int`;
  const below = `(c.created_at, c.id) < ($2::timestamptz, $3::uuid)`;
  // `meta`, not `metadata`: oct_call_history_metadata is the detail view's statement.
  const suffix = present.map((k) => (k === 'metadata' ? 'meta' : k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)));
  const narrow = (owner: Owner) =>
    statement(
      [ownerName('oct_call_history', owner), ...suffix].join('_'),
      `
  SELECT p.*
    FROM unnest($1::uuid[]) AS a(id)
   CROSS JOIN LATERAL (
     SELECT ${LIST_COLUMNS} FROM calls c
      WHERE c.${owner} = a.id
        AND ${below}
        AND c.created_at >= $4::timestamptz${extra}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT ${limit}) AS p
   ORDER BY p."createdAt" DESC, p.id DESC
   LIMIT ${limit}`,
    );
  // For more accounts than a page has rows (an agency's clients), a page from each would grow with the accounts. So
  // first each account's newest matching call's time (one index entry each); the page's oldest possible time is the
  // page-size-th newest of those (that many calls are at least that new); and only the accounts with a call that new
  // are read, from that time on: at most a page from each of at most a page of accounts (an agency's whole scope is
  // one range of the agency_id index: `byAgency`, the narrow statement by that column).
  const wide = statement(
    ['oct_call_history_wide', ...suffix].join('_'),
    `
  WITH heads AS MATERIALIZED (
    SELECT a.id, h.created_at
      FROM unnest($1::uuid[]) AS a(id)
     CROSS JOIN LATERAL (
       SELECT c.created_at FROM calls c
        WHERE c.account_id = a.id
          AND ${below}
          AND c.created_at >= $4::timestamptz${extra}
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT 1) AS h
  ), floor AS (
    SELECT coalesce((SELECT created_at FROM heads ORDER BY created_at DESC OFFSET ${limit} - 1 LIMIT 1),
                    '-infinity'::timestamptz) AS at
  )
  SELECT p.*
    FROM heads, floor
   CROSS JOIN LATERAL (
     SELECT ${LIST_COLUMNS} FROM calls c
      WHERE c.account_id = heads.id
        AND ${below}
        AND c.created_at >= greatest($4::timestamptz, floor.at)${extra}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT ${limit}) AS p
   WHERE heads.created_at >= floor.at
   ORDER BY p."createdAt" DESC, p.id DESC
   LIMIT ${limit}`,
  );
  return {
    narrow: narrow('account_id'),
    wide,
    byAgency: narrow('agency_id'),
    listed: narrow('listed_for_account_id'),
  };
}

/** Every combination of the optional filters, keyed by their names joined with ','. */
export const HISTORY: Map<string, ReturnType<typeof historyStatement>> = new Map(
  Array.from({ length: 1 << OPTIONAL.length }, (_, mask) => {
    const present = OPTIONAL.filter((_, i) => mask & (1 << i)).map((f) => f.key);
    return [present.join(','), historyStatement(present)] as const;
  }),
);

/** Whether the optional filter `key` is asked for. */
export function filterSet(filters: CallHistoryFilters, key: OptionalKey): boolean {
  return filters[key] !== null;
}
