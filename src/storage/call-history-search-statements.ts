// The Calls list's searches as statements, for each column a scope's calls are found by: by their own index (a
// metadata value, a number or a name prefix), the name search's merge, a page of given calls, the probe of the
// newest. Hand-written: the operators each index answers and plans Prisma cannot write (each statement says which).
import { LIST_COLUMNS, ownerName, type Owner } from './call-history-sql.js';
import { statement, type Statement } from './statements.js';

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
 * agent, number prefix, name prefix, the two metadata containments (null: not asked), the outcome and the limit.
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
             m."attemptsEnded", m."attemptOutcomes", m."answeredBy", m."timezoneSource", m."listedForAccountId", m.outcome,
             m."heldBy", m."heldReason"
        FROM m
       WHERE (m."createdAt", m.id) < (${n(1)}::timestamptz, ${n(2)}::uuid) AND m."createdAt" >= ${n(3)}::timestamptz
         AND (${n(4)}::text IS NULL OR m.status = ${n(4)}::text)
         AND (${n(5)}::uuid IS NULL OR m."agentId" = ${n(5)}::uuid)
         AND (${n(6)}::text IS NULL OR left(m."phoneNumber", char_length(${n(6)}::text)) = ${n(6)}::text)
         AND (${n(7)}::text IS NULL OR left(lower(m.name), char_length(${n(7)}::text)) = lower(${n(7)}::text))
         AND (${n(8)}::jsonb IS NULL OR m.meta::jsonb @> ${n(8)}::jsonb OR m.meta::jsonb @> ${n(9)}::jsonb)
         AND (${n(10)}::text IS NULL OR m.outcome = ${n(10)}::text)
       ORDER BY m."createdAt" DESC, m.id DESC
       LIMIT ${n(11)}::int) AS p ON true`,
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

export type Search = 'metadata' | 'numberPrefix' | 'namePrefix';

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
export const NAME_MERGE_FIRST_MIN = 2;

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
// a million-call account's 49 names: docs/performance.md#the-calls-list-and-its-searches.) Parameters: the accounts,
// the prefix, the upper bound (time, id), the lower time, the limit, SEARCH_NAMES_MAX + 1.
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
      AND ($12::text IS NULL OR c.outcome = $12::text)
    ORDER BY c.created_at DESC, c.id DESC
    LIMIT $13::int`,
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
export const SEARCH_PROBE_WALK_MIN = 5;

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
         m.timezone, m."attemptsEnded", m."attemptOutcomes", m."answeredBy", m."timezoneSource", m."listedForAccountId",
         m.outcome, m."heldBy", m."heldReason"
    FROM (SELECT count(*)::int AS seen FROM keys) AS k
    LEFT JOIN LATERAL (
      SELECT * FROM newest n
       WHERE ($7::text IS NULL OR n.status = $7::text)
         AND ($8::uuid IS NULL OR n."agentId" = $8::uuid)
         AND ($9::text IS NULL OR left(n."phoneNumber", char_length($9::text)) = $9::text)
         AND ($10::text IS NULL OR left(lower(n.name), char_length($10::text)) = lower($10::text))
         AND ($11::jsonb IS NULL OR n.meta::jsonb @> $11::jsonb OR n.meta::jsonb @> $12::jsonb)
         AND ($13::text IS NULL OR n.outcome = $13::text)
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

export const BY_OWNER = Object.fromEntries(
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
