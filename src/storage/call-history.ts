// The dashboard's reads of call history: a page of the calls of the accounts a viewer manages (newest first, keyset on
// (created_at, id), filtered), one call with its events and its webhook deliveries and their attempts, and the
// accounts and agents the filters offer. Read-only.
import type { Call } from '../generated/prisma/client.js';
import type { CallStatus, DeliveryStatus, FailureReason } from '../../schemas/vocabulary.js';
import type pg from 'pg';
import { statement, type Statement } from './statements.js';
import { PoolRepository } from './driver.js';
import type { Scope } from '../domain/tenancy.js';
import { accountsWhere } from './scope-where.js';
import { inTransaction } from './transaction.js';

/** Which calls: every filter that is not null must hold. */
export interface CallHistoryFilters {
  status: CallStatus | null;
  agentId: string | null;
  /** Destination numbers that start with this (`+` and digits: "+1415"). */
  numberPrefix: string | null;
  /** Names that start with this, in any case. */
  namePrefix: string | null;
  /** One metadata key and its value: the call's metadata has the key with either of `values` (JSON values). */
  metadata: MetadataMatch | null;
  /** Created at or after. */
  from: Date | null;
  /** Created before. */
  to: Date | null;
}

/** `crm_id = 123`: the key, and the JSON values that count as that value (a number-looking one as both). */
export interface MetadataMatch {
  key: string;
  values: [unknown] | [unknown, unknown];
}

/**
 * Whose calls a page lists: the accounts given, or an agency's whole scope (itself and every client), which the
 * walk reads from the accounts table rather than from a list of a thousand ids. With the accounts, `listedFor`: those
 * whose listed calls (an agency's key on their agents: calls.listed_for_account_id) are read besides (historyAccounts).
 */
export type HistoryAccounts = { accountIds: string[]; listedFor?: string[] } | { agencyId: string };

/**
 * Whose calls a Calls list of `scope` reads: the accounts given (null: the whole scope). The calls an agency's key
 * placed on its clients' agents are the agency's (account_id) and listed for the client: a list that reads the agency's
 * own calls has them already; one of clients alone (a client's scope, or an agency's choosing one client) reads the
 * calls listed for those clients too.
 */
export function historyAccounts(scope: Scope, accountIds: string[] | null): HistoryAccounts {
  if (!accountIds) return { agencyId: scope.accountId };
  const agencyIncluded = scope.kind === 'agency' && accountIds.includes(scope.accountId);
  return { accountIds, listedFor: agencyIncluded ? [] : accountIds };
}

/**
 * The column a statement finds its scope's calls by: the accounts given (account_id), or an agency's whole scope
 * (agency_id: the agency at the top of each call's account, kept by a trigger, migration 20261129100000), one range
 * of the (agency_id, ...) indexes rather than one per client.
 */
type Owner = 'account_id' | 'agency_id' | 'listed_for_account_id';

/** Whose calls a statement reads: the ids of `column` ($1). */
interface Owners {
  column: Owner;
  ids: string[];
}

/** The whole scope of `accounts` by its own column: the accounts given, or the agency by its calls' agency_id. */
function wholeScope(accounts: HistoryAccounts): Owners {
  return 'accountIds' in accounts
    ? { column: 'account_id', ids: accounts.accountIds }
    : { column: 'agency_id', ids: [accounts.agencyId] };
}

/**
 * A statement's name for `owner`: the agency's twin of a statement carries `_by_agency`, the twin over the calls listed
 * for a client (calls.listed_for_account_id, read through partial indexes twin to the account's) `_listed`.
 */
function ownerName(name: string, owner: Owner): string {
  return owner === 'agency_id' ? `${name}_by_agency` : owner === 'listed_for_account_id' ? `${name}_listed` : name;
}

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
  name: string | null;
  status: CallStatus;
  failureReason: FailureReason | null;
  durationSeconds: number | null;
  createdAt: Date;
  startedAt: Date | null;
  /** Why it waits, when it does: see format.ts's waitingWords. */
  notBefore: Date;
  nextAttemptAt: Date | null;
  scheduledAt: Date | null;
  attempt: number;
  /** The zone the call's window is read in (its local times). */
  timezone: string | null;
  /** How many attempts have ended (entries of attempt_outcomes). */
  attemptsEnded: number;
  /** The ended attempts as stored ([{ attempt, outcome, at }]), for the list's attempts line. */
  attemptOutcomes: unknown;
  answeredBy: Call['answeredBy'];
  timezoneSource: Call['timezoneSource'];
  /** The client the call is listed for besides its account (an agency's key on that client's agent), else null. */
  listedForAccountId: string | null;
}

const LIST_COLUMNS = `c.id, c.account_id AS "accountId", c.agent_id AS "agentId", c.phone_number AS "phoneNumber", c.name,
  c.status::text AS status, c.failure_reason::text AS "failureReason", c.duration_seconds AS "durationSeconds", c.created_at AS "createdAt",
  c.started_at AS "startedAt", c.not_before AS "notBefore", c.next_attempt_at AS "nextAttemptAt", c.scheduled_at AS "scheduledAt",
  c.attempt, c.timezone, jsonb_array_length(c.attempt_outcomes)::int AS "attemptsEnded",
  c.attempt_outcomes AS "attemptOutcomes", c.answered_by::text AS "answeredBy", c.timezone_source::text AS "timezoneSource",
  c.listed_for_account_id AS "listedForAccountId"`;

/** The metadata containment's two values: `{"key": value}` for each value that counts (the same twice for one). */
function containment(match: MetadataMatch): [string, string] {
  const [a, b = a] = match.values;
  return [JSON.stringify({ [match.key]: a }), JSON.stringify({ [match.key]: b })];
}

/**
 * The optional filters, in the order their parameters follow $1-$4. The equality ones are index conditions; the
 * searches are written so that no index serves them here (a function, not the operator): this walk is taken only
 * when a search matches many calls, and then reading the account's newest calls in order finds a page soonest (see
 * NEWEST_FIRST for how the planner is held to that).
 */
const OPTIONAL = [
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
] as const;

type OptionalKey = (typeof OPTIONAL)[number]['key'];
const PARAMS: Record<OptionalKey, number> = { status: 1, agentId: 1, numberPrefix: 1, namePrefix: 1, metadata: 2 };

const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
/** A name search's values, as nameNewest and nameMerge take them: owners, prefix, upper bound, from, limit. */
type NameSearchValues = [string[], string | null, Date | 'infinity', string, Date | '-infinity', number];
const MIN_UUID = '00000000-0000-0000-0000-000000000000';

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

/** The planner's setting for nameMerge, set in the transaction that runs it (nameMerge says why). */
const GENERIC_PLAN = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** Every combination of the optional filters, keyed by their names joined with ','. */
const HISTORY: Map<string, ReturnType<typeof historyStatement>> = new Map(
  Array.from({ length: 1 << OPTIONAL.length }, (_, mask) => {
    const present = OPTIONAL.filter((_, i) => mask & (1 << i)).map((f) => f.key);
    return [present.join(','), historyStatement(present)] as const;
  }),
);

/**
 * A search first asks its own index for the matching calls of the accounts, at most this many (+1 to know there are
 * more). Up to it, the page is sorted from them; beyond it the search matches so many calls that walking the
 * accounts' newest calls in order (HISTORY) meets a page of them soon.
 */
export const SEARCH_CANDIDATES_MAX = 5_000;

/**
 * One more than SEARCH_CANDIDATES_MAX (to know there are more), written into the statements: with a LIMIT parameter
 * the generic plan guesses it stops after a tenth of the rows and prefers a sequential scan to the index.
 */
const CANDIDATES_LIMIT = SEARCH_CANDIDATES_MAX + 1;

// Hand-written: the operators each index answers (jsonb_path_ops containment on the jsonb form of the `json` column;
// byte-wise text_pattern_ops ranges: a prefix is the range [prefix, prefix || U+10FFFF)), which Prisma cannot write.
/**
 * A search in one statement: the calls its index finds (at most CANDIDATES_LIMIT, `matched` says how many), and of
 * them a page with every filter applied, newest first; one row with only `matched` when none is left. Parameters: $1
 * the accounts, then the search's own (`own`), then the page's: the upper bound (time, id), the lower time, status,
 * agent, number prefix, name prefix, the two metadata containments (null: not asked) and the limit.
 */
function searchStatement(name: string, own: number, where: string): Statement {
  const n = (i: number) => `$${own + 1 + i}`;
  return statement(
    name,
    `
  WITH m AS MATERIALIZED (
    SELECT ${LIST_COLUMNS}, c.metadata AS meta FROM calls c
     WHERE ${where}
     LIMIT ${CANDIDATES_LIMIT})
  SELECT k.matched, p.*
    FROM (SELECT count(*)::int AS matched FROM m) AS k
    LEFT JOIN LATERAL (
      SELECT m.id, m."accountId", m."agentId", m."phoneNumber", m.name, m.status, m."failureReason", m."durationSeconds",
             m."createdAt", m."startedAt", m."notBefore", m."nextAttemptAt", m."scheduledAt", m.attempt, m.timezone,
             m."attemptsEnded", m."attemptOutcomes", m."answeredBy", m."timezoneSource", m."listedForAccountId"
        FROM m
       WHERE (m."createdAt", m.id) < (${n(1)}::timestamptz, ${n(2)}::uuid) AND m."createdAt" >= ${n(3)}::timestamptz
         AND (${n(4)}::text IS NULL OR m.status = ${n(4)}::text)
         AND (${n(5)}::uuid IS NULL OR m."agentId" = ${n(5)}::uuid)
         AND (${n(6)}::text IS NULL OR left(m."phoneNumber", char_length(${n(6)}::text)) = ${n(6)}::text)
         AND (${n(7)}::text IS NULL OR left(lower(m.name), char_length(${n(7)}::text)) = lower(${n(7)}::text))
         AND (${n(8)}::jsonb IS NULL OR m.meta::jsonb @> ${n(8)}::jsonb OR m.meta::jsonb @> ${n(9)}::jsonb)
       ORDER BY m."createdAt" DESC, m.id DESC
       LIMIT ${n(10)}::int) AS p ON true`,
  );
}

/**
 * The calls whose `owner` is one of `$n`. For the listed calls' column, stated as not null too: PostgreSQL does not
 * infer that from `= ANY`, and without it cannot use the partial indexes that hold only listed calls.
 */
const ownerAny = (owner: Owner, n: number) =>
  `c.${owner} = ANY($${n}::uuid[])${owner === 'listed_for_account_id' ? ` AND c.${owner} IS NOT NULL` : ''}`;

/**
 * The calls of the owners $1 whose name starts with $2 in any case: a range of the owner's name index (its partial
 * predicate too).
 */
const nameMatches = (owner: Owner) => `${ownerAny(owner, 1)} AND c.name IS NOT NULL
       AND lower(c.name) ~>=~ lower($2::text) AND lower(c.name) ~<~ (lower($2::text) || chr(1114111))`;

type Search = 'metadata' | 'numberPrefix' | 'namePrefix';

/**
 * The searches by owner. An agency's whole scope has no number search of its own: the number index is by account
 * (a twin by agency would be one more index for every call's writes to keep), so a number search reads the agency's
 * accounts (listCallHistory). The calls listed for a client have theirs (a partial index: listed calls only).
 */
const searches = (owner: Owner): Partial<Record<Search, Statement>> => ({
  metadata: searchStatement(
    ownerName('oct_call_search_metadata', owner),
    2,
    `(c.metadata::jsonb @> $2::jsonb OR c.metadata::jsonb @> $3::jsonb) AND ${ownerAny(owner, 1)}`,
  ),
  ...(owner !== 'agency_id'
    ? {
        numberPrefix: searchStatement(
          ownerName('oct_call_search_number', owner),
          1,
          `${ownerAny(owner, 1)} AND c.phone_number ~>=~ $2::text AND c.phone_number ~<~ ($2::text || chr(1114111))`,
        ),
      }
    : {}),
  namePrefix: searchStatement(ownerName('oct_call_search_name', owner), 1, nameMatches(owner)),
});

// Hand-written: a name search's page from its index alone. The index holds each named call's time and id (and the
// name, which the planner wants for lower(name)), so every match's (created_at, id) is read without its table row;
// the newest $6 of them are then fetched. No LIMIT inside the CTE: with one, a generic plan may walk the newest calls
// instead. Parameters: the accounts, the prefix, the upper bound (time, id), the lower time, the limit.
const nameNewest = (owner: Owner) =>
  statement(
    ownerName('oct_call_search_name_newest', owner),
    `
  WITH m AS MATERIALIZED (
    SELECT c.created_at, c.id FROM calls c
     WHERE ${nameMatches(owner)}
       AND (c.created_at, c.id) < ($3::timestamptz, $4::uuid) AND c.created_at >= $5::timestamptz)
  SELECT ${LIST_COLUMNS} FROM calls c
   WHERE c.id = ANY (ARRAY(SELECT m.id FROM m ORDER BY m.created_at DESC, m.id DESC LIMIT $6::int))
   ORDER BY c.created_at DESC, c.id DESC`,
  );

/**
 * A name search alone is answered by merging the newest matches of each distinct name of its prefix (nameMerge) when
 * no account searched holds more than this many names with that prefix (and the scope is one the probe reads, of at
 * most SEARCH_PROBE_ACCOUNTS accounts): what it reads is then bounded by this and the page, not by the matches. It is
 * asked before the probe of the newest calls, but for a single letter (NAME_MERGE_FIRST_MIN), whose page the probe
 * is asked for first. A prefix of more names (names that seldom repeat) is then read in full (nameNewest), but only
 * when the probe finds too few matches among the newest calls to walk to a page (SEARCH_PROBE_WALK_MIN).
 */
export const SEARCH_NAMES_MAX = 200;
/** The shortest name prefix whose merge is asked before the probe (listCallHistory says why). */
const NAME_MERGE_FIRST_MIN = 2;

// Hand-written: a name search's page as a merge of its names, newest first, from the name index alone (Prisma has no
// recursive query). Within one (account, lower(name)) the index is ordered by (created_at, id), so each name is a
// stream of its matches, newest last. `names` lists each account's names of the prefix with each one's newest match,
// one descent each (a loose scan, backwards, stopped at $7 names in an account: `names` = $7, the most of one account,
// says there may be more, and then nothing else is read); `heads` takes each name's newest match below the page's
// bound (that one, or for a later page one more descent), and keeps the newest $6 of them, ranked (a name whose newest
// is not among them has $6 newer matches before it); `merged` reads, from the head of rank r on, that name's newest
// $6 - r + 1 matches (the r - 1 newer heads are above any later one: no more of its matches can be on the page), one
// descent and a run of the index each, and keeps the newest $6. So at most 2 x $7 index entries an account, then
// $6 x ($6 + 1) / 2 (1,326 for a page of 50), and $6 rows. (A merge taking one match at a time, a recursive step
// each, read 51 entries where this reads up to 1,326, but its steps cost more than the entries: 4.3 against 2.8 ms on
// a million-call account's 49 names, twentieth session.) Parameters: the accounts, the prefix, the upper bound (time,
// id), the lower time, the limit, SEARCH_NAMES_MAX + 1.
const nameMerge = (owner: Owner) =>
  statement(
    ownerName('oct_call_search_name_merge', owner),
    `
  WITH RECURSIVE names AS (
    SELECT a.id AS account, f.lname, f.at, f.id, 1 AS n
      FROM unnest($1::uuid[]) AS a(id)
     CROSS JOIN LATERAL (
       SELECT lower(c.name) AS lname, c.created_at AS at, c.id FROM calls c
        WHERE c.${owner} = a.id AND c.name IS NOT NULL
          AND lower(c.name) ~>=~ lower($2::text) AND lower(c.name) ~<~ (lower($2::text) || chr(1114111))
        ORDER BY lower(c.name) USING ~>~, c.created_at DESC, c.id DESC LIMIT 1) AS f
    UNION ALL
    SELECT s.account, f.lname, f.at, f.id, s.n + 1
      FROM names s
     CROSS JOIN LATERAL (
       SELECT lower(c.name) AS lname, c.created_at AS at, c.id FROM calls c
        WHERE c.${owner} = s.account AND c.name IS NOT NULL
          AND lower(c.name) ~>=~ lower($2::text) AND lower(c.name) ~<~ s.lname
        ORDER BY lower(c.name) USING ~>~, c.created_at DESC, c.id DESC LIMIT 1) AS f
     WHERE s.n < $7::int
  ), heads AS MATERIALIZED (
    SELECT s.account, s.lname, h.created_at, h.id, row_number() OVER (ORDER BY h.created_at DESC, h.id DESC) AS rank
      FROM names s
     CROSS JOIN LATERAL (
       SELECT s.at AS created_at, s.id WHERE (s.at, s.id) < ($3::timestamptz, $4::uuid) AND s.at >= $5::timestamptz
       UNION ALL
       (SELECT c.created_at, c.id FROM calls c
         WHERE (s.at, s.id) >= ($3::timestamptz, $4::uuid)
           AND c.${owner} = s.account AND c.name IS NOT NULL AND lower(c.name) = s.lname
           AND (c.created_at, c.id) < ($3::timestamptz, $4::uuid) AND c.created_at >= $5::timestamptz
         ORDER BY c.created_at DESC, c.id DESC LIMIT 1)) AS h
     WHERE (SELECT max(n) FROM names) < $7::int
     ORDER BY h.created_at DESC, h.id DESC
     LIMIT $6::int
  ), merged AS MATERIALIZED (
    SELECT m.id FROM heads h
     CROSS JOIN LATERAL (
       SELECT c.created_at, c.id FROM calls c
        WHERE c.${owner} = h.account AND c.name IS NOT NULL AND lower(c.name) = h.lname
          AND (c.created_at, c.id) <= (h.created_at, h.id) AND c.created_at >= $5::timestamptz
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT $6::int - h.rank + 1) AS m
     ORDER BY m.created_at DESC, m.id DESC
     LIMIT $6::int
  )
  SELECT k.names, p.*
    FROM (SELECT coalesce(max(n), 0)::int AS names FROM names) AS k
    LEFT JOIN LATERAL (
      SELECT ${LIST_COLUMNS} FROM calls c
       WHERE k.names < $7::int AND c.id = ANY (ARRAY(SELECT m.id FROM merged m))
       ORDER BY c.created_at DESC, c.id DESC) AS p ON true`,
  );

// Hand-written: a page of the given calls (a search's candidates, or one call id), every filter applied, newest first.
const pageOf = (owner: Owner) =>
  statement(
    ownerName('oct_call_search_page', owner),
    `SELECT ${LIST_COLUMNS} FROM calls c
    WHERE c.id = ANY($1::uuid[]) AND ${ownerAny(owner, 2)}
      AND (c.created_at, c.id) < ($3::timestamptz, $4::uuid) AND c.created_at >= $5::timestamptz
      AND ($6::call_status IS NULL OR c.status = $6::call_status)
      AND ($7::uuid IS NULL OR c.agent_id = $7::uuid)
      AND ($8::text IS NULL OR left(c.phone_number, char_length($8::text)) = $8::text)
      AND ($9::text IS NULL OR left(lower(c.name), char_length($9::text)) = lower($9::text))
      AND ($10::jsonb IS NULL OR jsonb_contains(c.metadata::jsonb, $10::jsonb) OR jsonb_contains(c.metadata::jsonb, $11::jsonb))
    ORDER BY c.created_at DESC, c.id DESC
    LIMIT $12::int`,
  );

/**
 * A search over a common value finds its page among the newest calls at once, while asking its index first would read
 * thousands of matches (half a million for a metadata value half the calls have). So a search first looks at the
 * accounts' newest SEARCH_PROBE_ROWS calls below the page's bound: if a page of matches is among them, that is the
 * page. Only for scopes of at most SEARCH_PROBE_ACCOUNTS accounts, as it reads that many calls of each.
 */
export const SEARCH_PROBE_ROWS = 300;
export const SEARCH_PROBE_ACCOUNTS = 20;
/**
 * When at least this many of the newest SEARCH_PROBE_ROWS match (1 in 60), the search is common enough that walking
 * the newest calls meets a page within a few thousand rows, cheaper than the index's thousands of matches.
 */
const SEARCH_PROBE_WALK_MIN = 5;

// Hand-written: the accounts' newest $6 calls below the bound, every filter applied to them, newest first. Which calls
// those are is read from the (account_id, created_at, id) index alone (`keys`: a LATERAL top-N per account, as
// HISTORY, then the newest $6 of all of them); only they are then read from the table, each account's from the oldest
// of them on (`newest`, ordered and limited as `keys` so that the planner, which cannot know how few that is, takes the
// index range too), rather than $6 rows of every account for $6 kept. `seen` is how many calls were looked at: fewer
// than $6 means there were no more below the bound.
const probe = (owner: Owner) =>
  statement(
    ownerName('oct_call_search_probe', owner),
    `
  WITH keys AS MATERIALIZED (
    SELECT k.created_at, k.id FROM unnest($1::uuid[]) AS a(id)
     CROSS JOIN LATERAL (
       SELECT c.created_at, c.id FROM calls c
        WHERE c.${owner} = a.id AND (c.created_at, c.id) < ($2::timestamptz, $3::uuid) AND c.created_at >= $4::timestamptz
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT $6::int) AS k
     ORDER BY k.created_at DESC, k.id DESC
     LIMIT $6::int
  ), oldest AS (
    SELECT k.created_at, k.id FROM keys k ORDER BY k.created_at, k.id LIMIT 1
  ), newest AS MATERIALIZED (
    SELECT p.* FROM oldest o, unnest($1::uuid[]) AS a(id)
     CROSS JOIN LATERAL (
       SELECT ${LIST_COLUMNS}, c.metadata AS meta FROM calls c
        WHERE c.${owner} = a.id AND (c.created_at, c.id) < ($2::timestamptz, $3::uuid)
          AND (c.created_at, c.id) >= (o.created_at, o.id)
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT $6::int) AS p)
  SELECT k.seen, m.id, m."accountId", m."agentId", m."phoneNumber", m.name, m.status, m."failureReason",
         m."durationSeconds", m."createdAt", m."startedAt", m."notBefore", m."nextAttemptAt", m."scheduledAt", m.attempt,
         m.timezone, m."attemptsEnded", m."attemptOutcomes", m."answeredBy", m."timezoneSource", m."listedForAccountId"
    FROM (SELECT count(*)::int AS seen FROM keys) AS k
    LEFT JOIN LATERAL (
      SELECT * FROM newest n
       WHERE ($7::text IS NULL OR n.status = $7::text)
         AND ($8::uuid IS NULL OR n."agentId" = $8::uuid)
         AND ($9::text IS NULL OR left(n."phoneNumber", char_length($9::text)) = $9::text)
         AND ($10::text IS NULL OR left(lower(n.name), char_length($10::text)) = lower($10::text))
         AND ($11::jsonb IS NULL OR n.meta::jsonb @> $11::jsonb OR n.meta::jsonb @> $12::jsonb)
       ORDER BY n."createdAt" DESC, n.id DESC
       LIMIT $5::int) AS m ON true`,
  );

/** The statements that read a scope's calls but for the plain walk (HISTORY), for one column they find them by. */
interface OwnerStatements {
  searches: Partial<Record<Search, Statement>>;
  nameNewest: Statement;
  nameMerge: Statement;
  pageOf: Statement;
  probe: Statement;
}

const BY_OWNER = Object.fromEntries(
  (['account_id', 'agency_id', 'listed_for_account_id'] as const).map((owner) => [
    owner,
    {
      searches: searches(owner),
      nameNewest: nameNewest(owner),
      nameMerge: nameMerge(owner),
      pageOf: pageOf(owner),
      probe: probe(owner),
    },
  ]),
) as Record<Owner, OwnerStatements>;

// Hand-written: one metadata key's value of each call (jsonb: the last of duplicate keys, as the search reads them).
const METADATA_VALUES = statement(
  'oct_call_history_metadata_values',
  'SELECT id, (metadata::jsonb) -> $2::text AS value FROM calls WHERE id = ANY($1::uuid[])',
);

// Hand-written: where each waiting call stands in its account's line (the dispatcher's order: oldest due first, see
// call-claims.ts): 1 + the due calls of the account before it. The line is bounded (MAX_QUEUED_CALLS per account).
const QUEUE_POSITIONS = statement(
  'oct_call_history_queue_positions',
  `SELECT w.id, 1 + (SELECT count(*) FROM calls q
                      WHERE q.account_id = w.account_id AND q.status = 'initiated' AND q.not_before <= $2::timestamptz
                        AND q.expires_at > $2::timestamptz AND (q.created_at, q.id) < (w.created_at, w.id))::int AS position
     FROM calls w WHERE w.id = ANY($1::uuid[])`,
);

/**
 * A name search with no other filter than the dates: its index answers it alone (nameMerge, else nameNewest),
 * whatever the number of matches. The other filters need each match's row, so those searches keep the candidates' cap.
 */
function nameOnly(filters: CallHistoryFilters): boolean {
  return (
    filters.namePrefix !== null &&
    filters.status === null &&
    filters.agentId === null &&
    filters.numberPrefix === null &&
    filters.metadata === null
  );
}

/** Whether the optional filter `key` is asked for. */
function filterSet(filters: CallHistoryFilters, key: OptionalKey): boolean {
  return filters[key] !== null;
}

/**
 * The upper bound of a page: the cursor or the range's end (created_at < to is (created_at, id) < (to, the least
 * uuid)), whichever comes first.
 */
function upperBound(filters: CallHistoryFilters, before?: CallCursor): { at: Date | 'infinity'; id: string } {
  let upper: { at: Date | 'infinity'; id: string } = before
    ? { at: before.createdAt, id: before.id }
    : { at: 'infinity', id: MAX_UUID };
  if (filters.to && (upper.at === 'infinity' || filters.to.getTime() <= upper.at.getTime()))
    upper = { at: filters.to, id: MIN_UUID };
  return upper;
}

/**
 * A page's parameters as the search statements and pageOf take them, after their own: the upper bound (time, id),
 * the lower time, status, agent, number prefix, name prefix, the two metadata containments (null: not asked), limit.
 */
function pageParameters(
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
    limit,
  ];
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
  /** The client the call is listed for besides its account (an agency's key on that client's agent), else null. */
  listedFor: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null } | null;
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

export class CallHistoryRepository extends PoolRepository {
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
    let rows: CallListRow[] | null = null;
    if (searching) {
      // A name search alone is the merge of its names, whose reads are bounded by the names and the page whether the
      // name is common or rare: asked first, it answers with one statement. Not for a single letter, which starts
      // hundreds of names (the merge would list SEARCH_NAMES_MAX of them an account before it gives up) and which
      // the newest calls usually hold a page of. The probe comes after the merge only when it gives up (more names
      // than it merges, or a scope wider than it reads).
      const mergeFirst = nameOnly(filters) && [...filters.namePrefix!].length >= NAME_MERGE_FIRST_MIN;
      rows = mergeFirst ? await this.nameMerge(owners, this.nameSearch(owners, filters, upper, limit + 1)) : null;
      if (!rows) {
        const probe = await this.probePage(owners, filters, upper, limit + 1);
        // Matches enough of the newest calls that the walk meets a page soon: the index is not asked for every match
        // (it would hand over thousands first). But a single letter still asks for the merge of its names, whose
        // reads are bounded by the names and the page: the walk reads a page of matches from every account, 1 / share
        // calls each (15,000 rows for 5 accounts and a name 1 call in 60 has).
        rows =
          probe?.page ??
          (probe && probe.matched >= SEARCH_PROBE_WALK_MIN
            ? nameOnly(filters) && !mergeFirst
              ? await this.nameMerge(owners, this.nameSearch(owners, filters, upper, limit + 1))
              : null
            : await this.searchPage(owners, filters, upper, limit + 1, { merged: mergeFirst }));
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
      rows = await this.newestFirst<CallListRow>({ ...sql, values });
    }
    return rows;
  }

  /**
   * Whose calls the statements read for `accounts` and `filters`: the accounts given; or, for an agency, the agency
   * by its calls' agency_id, a range of an (agency_id, ...) index whatever its number of clients. But for a filter
   * that only an account's index serves (an agent, whose calls are one account's; a number prefix), the agency's
   * accounts that can have a call at or before `upper` (first_call_at, kept by a trigger, at or before it): a client
   * that never placed a call is not searched, so an agency of a thousand quiet clients costs neither a thousand ids
   * nor a thousand index descents.
   */
  private async ownersOf(
    accounts: HistoryAccounts,
    filters: Pick<CallHistoryFilters, 'agentId' | 'numberPrefix'>,
    upper: { at: Date | 'infinity' },
  ): Promise<Owners> {
    if ('accountIds' in accounts || (filters.agentId === null && filters.numberPrefix === null))
      return wholeScope(accounts);
    const rows = await this.prisma.account.findMany({
      where: {
        AND: [
          accountsWhere({ accountId: accounts.agencyId, kind: 'agency' }),
          { firstCallAt: upper.at === 'infinity' ? { not: null } : { not: null, lte: upper.at } },
        ],
      },
      select: { id: true },
    });
    return { column: 'account_id', ids: rows.map((r) => r.id) };
  }

  /** Runs one of the statements that read a scope's calls newest first, with NEWEST_FIRST's planner settings. */
  private async newestFirst<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<R[]> {
    return inTransaction(this.pool, async (client) => {
      await client.query(NEWEST_FIRST);
      return (await client.query<R>(query)).rows;
    });
  }

  /**
   * A search's look at the scope's newest SEARCH_PROBE_ROWS calls (SEARCH_PROBE_ROWS says why): `page` is the page
   * when it is among them (null when fewer than a page match there while older calls remain), `matched` how many of
   * them match. Null when no search is asked for or the scope is too wide.
   */
  private async probePage(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
  ): Promise<{ page: CallListRow[] | null; matched: number } | null> {
    const searching = filters.metadata !== null || filters.numberPrefix !== null || filters.namePrefix !== null;
    if (!searching || owners.ids.length > SEARCH_PROBE_ACCOUNTS) return null;
    const [a, b] = filters.metadata ? containment(filters.metadata) : [null, null];
    const rows = await this.newestFirst<CallListRow & { seen: number }>({
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
      ],
    });
    // The rows keep their `seen` column: nothing reads it past here.
    const page: CallListRow[] = rows.filter((r) => r.id !== null);
    const seen = rows[0]?.seen ?? 0;
    // A full page among the newest: it is the page. Fewer, but nothing older left to look at: so is that.
    return { page: page.length >= limit || seen < SEARCH_PROBE_ROWS ? page : null, matched: page.length };
  }

  /** A name search's values, as nameMerge and nameNewest take them. */
  private nameSearch(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
  ): NameSearchValues {
    return [owners.ids, filters.namePrefix, upper.at, upper.id, filters.from ?? '-infinity', limit];
  }

  /**
   * A name search's page as the merge of its names' newest matches (nameMerge); null when an owner has more than
   * SEARCH_NAMES_MAX names with the prefix (then nothing but the names was read), or the scope is wider than the
   * probe's.
   */
  private async nameMerge(owners: Owners, search: NameSearchValues): Promise<CallListRow[] | null> {
    if (search[0].length > SEARCH_PROBE_ACCOUNTS) return null;
    const values = [...search, SEARCH_NAMES_MAX + 1];
    // In a generic plan: PostgreSQL would plan it afresh on every run (the custom plan, knowing the accounts and the
    // prefix, looks cheaper than the generic one, of the same shape), and planning it costs about what running it does.
    const rows = await inTransaction(this.pool, async (client) => {
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
  private async searchPage(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
    tried: { merged: boolean } = { merged: false },
  ): Promise<CallListRow[] | null> {
    const statements = BY_OWNER[owners.column];
    if (nameOnly(filters)) {
      const search = this.nameSearch(owners, filters, upper, limit);
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
      if (rows.length > 0) return rows;
    }
    return [];
  }

  /** The value of one metadata key of each of the calls `ids` (absent keys left out), as JSON values. */
  async metadataValues(ids: string[], key: string): Promise<Map<string, unknown>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; value: unknown }>({ ...METADATA_VALUES, values: [ids, key] });
    return new Map(rows.filter((r) => r.value !== null).map((r) => [r.id, r.value]));
  }

  /**
   * For each of the calls `ids` that waits for a free slot at `now` (due, not yet dialled), its place in its
   * account's line: 1 is dialled next. Calls that are not waiting get a number too; callers ask only for due ones.
   */
  async queuePositions(ids: string[], now: Date): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; position: number }>({
      ...QUEUE_POSITIONS,
      values: [ids, now],
    });
    return new Map(rows.map((r) => [r.id, r.position]));
  }

  /** One call with its account, agent, events (oldest first), deliveries and their attempts; null when none. */
  async findCallDetail(callId: string): Promise<CallDetail | null> {
    const [call, text] = await Promise.all([
      this.prisma.call.findUnique({
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
      this.pool.query<{ metadata: string }>({ ...METADATA_TEXT, values: [callId] }),
    ]);
    if (!call) return null;
    // Read only for a listed call (no relation: calls.listed_for_account_id has no foreign key, as agency_id).
    const listedFor = call.listedForAccountId
      ? await this.prisma.account.findUnique({
          where: { id: call.listedForAccountId },
          select: { id: true, name: true, kind: true, agencyId: true },
        })
      : null;
    return { ...call, listedFor, metadata: text.rows[0]?.metadata ?? '{}' };
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
