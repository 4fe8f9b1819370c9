// The Overview's statements (overview.ts runs them): the day's outcomes, the endpoints' health, the first-run
// checklist, the accounts ranked for the page and the calls the calling rules hold. Hand-written: each is one
// statement whatever the number of accounts, over index ranges of a few recent rows (each says which).
import { ACTIVE_STATUSES_SQL } from './calls.js';
import { accountsSql, accountsSqlHalves, ownedSql } from './scope-where.js';
import { statement } from './statements.js';

/**
 * Per account, its calls that ended today in the viewer's zone, by outcome ('completed' or the failure reason; the
 * runtime's labels, 'agent:<label>', are read too and left out by outcomesOfDay): the day counters of the UTC days $2
 * to $3 (none when null) plus $6 (1, -1 or 0) times the quarter-hour counters from $4 to $5 (overview-today.ts says
 * which), the counters the
 * triggers on calls keep (migrations 20261128100000, 20261202090000, 20261202110000): for each account a probe of
 * each day and one range of quarters of its primary keys, at most 48 quarters of a few outcomes whatever the day's
 * calls. Counting the day's calls instead read some 5,000 rows of bench:scale's busiest account at every load and
 * live refresh.
 */
export const OUTCOMES = statement(
  'oct_overview_outcomes_of_local_day',
  `
  SELECT account_id, outcome, sum(calls)::int AS calls FROM (
    SELECT o.account_id, o.outcome, o.calls FROM call_outcome_days o
     WHERE o.account_id = ANY($1::uuid[]) AND o.day >= $2::date AND o.day <= $3::date AND o.calls <> 0
    UNION ALL
    SELECT q.account_id, q.outcome, $6::int * q.calls FROM call_outcome_quarters q
     WHERE q.account_id = ANY($1::uuid[]) AND q.quarter >= $4::timestamptz AND q.quarter < $5::timestamptz
       AND q.calls <> 0) t
   GROUP BY account_id, outcome HAVING sum(calls) <> 0`,
);

/**
 * Every endpoint of the accounts with its health, in one statement (two per endpoint would be two thousand for an
 * agency of a thousand clients, again on every live refresh). Its last success: the last entry of its (endpoint_id,
 * succeeded) index range (Prisma's aggregate() wraps max() in a subquery PostgreSQL cannot answer from the index).
 * Its attempts since $2 that got no 2xx: each belongs to a delivery whose last failure is since then, the endpoint's
 * range of the partial (endpoint_id, last_failure_at) index (deliveries that failed only); counting from every
 * delivery attempted since then read thousands of a busy endpoint's rows on bench:scale's history database (3.8x
 * the empty one's Overview). Their attempts by the (delivery_id, attempt_number) index, one delivery at a time: as a
 * join, the planner (without statistics of a fresh table) read every attempt of the hour. Planned each time: with
 * `since` unknown a prepared (generic) plan guessed a third of all attempts and read the whole table.
 */
export const ENDPOINT_HEALTH = statement(
  'oct_overview_endpoint_health',
  `
  SELECT e.account_id, e.url, e.enabled, e.disabled_reason, s.last_attempt_at AS last_success_at, f.failures
    FROM webhook_endpoints e
    LEFT JOIN LATERAL (
      SELECT d.last_attempt_at FROM webhook_deliveries d
       WHERE d.endpoint_id = e.id AND d.status = 'succeeded' AND d.last_attempt_at IS NOT NULL
       ORDER BY d.last_attempt_at DESC LIMIT 1) s ON true
   CROSS JOIN LATERAL (
      SELECT coalesce(sum((
               SELECT count(*) FROM webhook_attempts a
                WHERE a.delivery_id = d.id AND a.started_at >= $2
                  AND (a.response_status IS NULL OR a.response_status < 200 OR a.response_status >= 300))), 0)::int AS failures
        FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.last_failure_at >= $2) f
   WHERE e.account_id = ANY($1::uuid[])`,
  { planEachTime: true },
);

/** What each first-run step asks of the accounts `a` that `accounts` (a condition on them) names. */
const FIRST_RUN_STEPS: Record<string, (accounts: string) => string> = {
  agent_with_number: (accounts) =>
    `JOIN agents g ON g.account_id = a.id WHERE ${accounts} AND g.phone_number IS NOT NULL`,
  default_agent: (accounts) => `WHERE ${accounts} AND a.default_agent_id IS NOT NULL`,
  api_key: (accounts) => `JOIN api_keys k ON k.account_id = a.id WHERE ${accounts} AND k.revoked_at IS NULL`,
  webhook: (accounts) => `JOIN webhook_endpoints e ON e.account_id = a.id WHERE ${accounts}`,
  // Whether any account has a call: the newest entry of each one's (account_id, created_at, id) range until one is
  // found, only for accounts that ever had one (first_call_at): Prisma's `account_id IN (...) LIMIT 1` was planned
  // as a sequential scan.
  first_call: (accounts) => `CROSS JOIN LATERAL (SELECT 1 FROM calls c WHERE c.account_id = a.id
                                   ORDER BY c.created_at DESC, c.id DESC LIMIT 1) x
                WHERE ${accounts} AND a.first_call_at IS NOT NULL`,
};

/**
 * The five steps at once, each an EXISTS on an index, the scope given as its account and agency (scope-where.ts), and
 * whether an agency scope (its own id in $2, null for a client) has switched its calling rules on (its row's
 * calling_rules, 20261202100000: a probe of the primary key). Prisma's `in` sends one parameter per account (a thousand for a large agency) in each of five statements, and a
 * list of ids waits for the listing of them. Each step asks the scope's own account first and its clients only when
 * that finds nothing (PostgreSQL runs the second EXISTS of an OR only then): an agency that took the step itself
 * does not read its thousand clients, five times, on every Overview.
 */
export const FIRST_RUN = statement(
  'oct_overview_first_run_of_scope',
  `SELECT ${Object.entries(FIRST_RUN_STEPS)
    .map(
      ([step, asked]) =>
        `(${accountsSqlHalves('a', 1)
          .map((accounts) => `EXISTS (SELECT 1 FROM accounts a ${asked(accounts)})`)
          .join(' OR ')}) AS ${step}`,
    )
    .join(',\n         ')},
         EXISTS (SELECT 1 FROM accounts a WHERE a.id = $2::uuid AND a.calling_rules->>'enabled' = 'true') AS calling_rules`,
);

/**
 * The accounts of a scope an Overview shows, in its order, in one statement: its own first, then at most $3 clients,
 * those with the most to see first (an endpoint disabled or failing since $5, then calls under way, failed and
 * completed today in the viewer's zone: the day counters of the UTC days $4 to $6 plus $9 times the quarters from $7 to $8,
 * as OUTCOMES), then by name; by name alone when all fit. With how many accounts the scope has and how many of them
 * have calls under way.
 *
 * Only the clients with something to see are ranked: those with waiting calls (their row's counter, which the triggers
 * keep), with an active call (calls_active_by_account: at most the limit each), with an outcome counter of today (the
 * scope's day and quarter counters by their agency_id, ranges of (agency_id, day) and (agency_id, quarter); a
 * client's by its primary keys), or whose endpoint is disabled or failing (the scope's endpoints by their agency_id,
 * then the partial index of failed deliveries: no probe per client for an endpoint it may not have), each read from a
 * few entries. The others all tie at nothing to see and follow by name: the first of
 * them come from the (agency_id, name, id) index, only while the ranked ones leave room on the page. The scope's rows
 * are read once, for its count, waiting counters and the ranked clients' names (a hash join: a probe of the primary key
 * per ranked client read 735 pages for the 245 with outcomes of the day on bench:scale's tenants database). Ranking
 * every client (the statement before: each one's row joined to the four sources, a probe of its endpoint, and the
 * thousand sorted on five keys) took 2.9 ms for an agency of 1,001 accounts on a copy of bench:scale's tenants
 * database (prepared, no load); 1.22 ms now (docs/performance.md#the-overview).
 */
export const RANKED = statement(
  'oct_overview_ranked_accounts',
  `
  WITH scope AS MATERIALIZED (
    SELECT a.id, a.name, a.kind, a.waiting_calls FROM accounts a WHERE ${accountsSql('a', 1)}
  ), active AS MATERIALIZED (
    SELECT c.account_id, count(*)::int AS calls FROM calls c
     WHERE c.account_id IN (SELECT s.id FROM scope s) AND c.status IN (${ACTIVE_STATUSES_SQL})
     GROUP BY c.account_id
  ), done AS MATERIALIZED (
    SELECT o.account_id, sum(o.calls) FILTER (WHERE o.outcome = 'completed') AS completed,
           sum(o.calls) FILTER (WHERE o.outcome <> 'completed') AS failed
      FROM (SELECT d.account_id, d.outcome, d.calls FROM call_outcome_days d
             WHERE ${ownedSql('d', 1)} AND d.day >= $4::date AND d.day <= $6::date AND d.calls <> 0
            UNION ALL
            SELECT q.account_id, q.outcome, $9::int * q.calls FROM call_outcome_quarters q
             WHERE ${ownedSql('q', 1)} AND q.quarter >= $7::timestamptz AND q.quarter < $8::timestamptz
               AND q.calls <> 0) o
     WHERE o.outcome NOT LIKE 'agent:%'
     GROUP BY o.account_id
    HAVING sum(o.calls) <> 0
  ), trouble AS MATERIALIZED (
    SELECT e.account_id FROM webhook_endpoints e
     WHERE ${ownedSql('e', 1)}
       AND (NOT e.enabled OR EXISTS (
             SELECT 1 FROM webhook_deliveries d
              WHERE d.endpoint_id = e.id AND d.last_failure_at >= $5
                AND EXISTS (SELECT 1 FROM webhook_attempts t
                             WHERE t.delivery_id = d.id AND t.started_at >= $5
                               AND (t.response_status IS NULL OR t.response_status < 200 OR t.response_status >= 300))))
  ), ranked AS MATERIALIZED (
    SELECT k.id, n.name, n.kind, k.id = $1::uuid AS own, t.account_id IS NOT NULL AS trouble,
           n.waiting_calls + coalesce(x.calls, 0) AS under_way, coalesce(d.failed, 0) AS failed,
           coalesce(d.completed, 0) AS completed
      FROM (SELECT s.id FROM scope s WHERE s.waiting_calls > 0 OR s.id = $1::uuid
            UNION SELECT x.account_id FROM active x
            UNION SELECT d.account_id FROM done d
            UNION SELECT t.account_id FROM trouble t) k
      JOIN scope n ON n.id = k.id
      LEFT JOIN active x ON x.account_id = k.id
      LEFT JOIN done d ON d.account_id = k.id
      LEFT JOIN trouble t ON t.account_id = k.id
  ), counted AS MATERIALIZED (
    SELECT (SELECT count(*) FROM scope)::int AS total,
           (SELECT count(*) FROM ranked r WHERE r.under_way > 0)::int AS under_way,
           (SELECT count(*) FROM ranked)::int AS ranked
  ), shown AS (
    (SELECT r.id, r.name, r.kind, r.own, r.trouble, r.under_way, r.failed, r.completed FROM ranked r
      ORDER BY r.own DESC, r.trouble DESC, r.under_way DESC, r.failed DESC, r.completed DESC, r.name, r.id
      LIMIT $3::int + 1)
    UNION ALL
    -- The clients with nothing to see, by name, only while the ranked ones leave room: of the index's first $3 + 1
    -- entries, those not ranked are at least the room left. Each ranked client has something to see and comes
    -- before every one of them, so $3 + 1 ranked fill the page alone.
    (SELECT f.id, f.name, f.kind, false, false, 0, 0, 0 FROM (
       SELECT a.id, a.name, a.kind FROM accounts a WHERE a.agency_id = $2::uuid
        ORDER BY a.name, a.id LIMIT CASE WHEN (SELECT c.ranked FROM counted c) > $3::int THEN 0 ELSE $3::int + 1 END) f
      WHERE NOT EXISTS (SELECT 1 FROM ranked r WHERE r.id = f.id))
  )
  SELECT s.id, s.name, s.kind::text AS kind, s.under_way::int AS under_way, k.total, k.under_way AS under_way_total
    FROM shown s, counted k
   ORDER BY s.own DESC,
            CASE WHEN k.total > $3::int + 1 THEN s.trouble END DESC NULLS LAST,
            CASE WHEN k.total > $3::int + 1 THEN s.under_way END DESC NULLS LAST,
            CASE WHEN k.total > $3::int + 1 THEN s.failed END DESC NULLS LAST,
            CASE WHEN k.total > $3::int + 1 THEN s.completed END DESC NULLS LAST,
            s.name, s.id
   LIMIT $3::int + 1`,
);

/**
 * The waiting calls of a scope the calling rules hold (20261202100000), by why: outside the permitted hours, or over
 * a cap per number. The scope's accounts, then each one's range of the partial index calls_held (20261202100001),
 * which has an entry only for a call the rules hold: a few probes of an index of the held calls alone, never the
 * scope's calls, and never another tenant's held calls (which a read of the whole index by agency would go through).
 */
export const HELD = statement(
  'oct_overview_held_calls',
  `
  SELECT count(*)::int AS held, count(*) FILTER (WHERE c.held_by = 'cap')::int AS capped
    FROM accounts a JOIN calls c ON c.account_id = a.id
   WHERE ${accountsSql('a', 1)} AND c.status = 'initiated' AND c.held_by IS NOT NULL`,
);
