// The Overview's outcome counters (call_outcome_days, call_outcome_quarters) written straight to the database, set-based:
// the triggers on calls keep them and the application never writes them, so a test of their reads (many accounts, two
// days of quarters) starts from the counters rather than from the hundreds of thousands of calls that would make them.
// What the triggers make of a write to calls stays a test's own SQL (test/storage/overview-outcomes.test.ts).
import { bulk, type Db } from './bulk.js';

/**
 * A counter of 1 call for each of `outcomes` in each of the `count` quarter hours up to `last` (its own quarter
 * included), for each of `accountIds`: oldest quarter first in the table's physical order, as time writes them. The
 * agency of each is the triggers' (set on insert).
 */
export async function insertOutcomeQuarters(
  db: Db,
  counters: { accountIds: readonly string[]; outcomes: readonly string[]; last: Date; count: number },
): Promise<void> {
  await bulk(
    db,
    `INSERT INTO call_outcome_quarters (account_id, quarter, outcome, calls)
     SELECT a, oct_outcome_quarter($2::timestamptz - q * interval '15 minutes'), o, 1
       FROM unnest($1::uuid[]) AS a, generate_series(0, $4::int - 1) AS q, unnest($3::text[]) AS o
      ORDER BY q DESC, a`,
    [counters.accountIds, counters.last, counters.outcomes, counters.count],
  );
}

/** One quarter's counter set to `calls` (a busy quarter among the ones of 1 call insertOutcomeQuarters writes). */
export async function setOutcomeQuarter(
  db: Db,
  counter: { accountId: string; quarter: Date; outcome: string; calls: number },
): Promise<void> {
  await bulk(
    db,
    `UPDATE call_outcome_quarters SET calls = $4 WHERE account_id = $1 AND quarter = $2 AND outcome = $3`,
    [counter.accountId, counter.quarter, counter.outcome, counter.calls],
  );
}

/**
 * Every quarter counter of `accountId` set to a number that differs from quarter to quarter (1 + its quarter hour
 * since the epoch, modulo 7), so that a quarter read twice or left out shows in a sum.
 */
export async function varyOutcomeQuarters(db: Db, accountId: string): Promise<void> {
  await bulk(
    db,
    `UPDATE call_outcome_quarters SET calls = 1 + (extract(epoch FROM quarter)::bigint / 900) % 7 WHERE account_id = $1`,
    [accountId],
  );
}

/** call_outcome_days replaced by the sums of the quarter counters per UTC day, as the triggers keep both. */
export async function sumOutcomeDays(db: Db): Promise<void> {
  await bulk(db, 'DELETE FROM call_outcome_days');
  await bulk(
    db,
    `INSERT INTO call_outcome_days (account_id, day, outcome, calls)
     SELECT account_id, (quarter AT TIME ZONE 'UTC')::date, outcome, sum(calls)
       FROM call_outcome_quarters GROUP BY 1, 2, 3`,
  );
}

/**
 * A day counter for each of `outcomes` on each of the `days` days up to `last` (YYYY-MM-DD), for each of
 * `accountIds`: on the day `d` days before `last`, the `n`th outcome (from 1) counts 1 + (d + n) % 5 calls.
 */
export async function insertOutcomeDays(
  db: Db,
  counters: { accountIds: readonly string[]; outcomes: readonly string[]; last: string; days: number },
): Promise<void> {
  await bulk(
    db,
    `INSERT INTO call_outcome_days (account_id, day, outcome, calls)
     SELECT a, $2::date - d, o.outcome, 1 + (d + o.n) % 5
       FROM unnest($1::uuid[]) AS a, generate_series(0, $4::int - 1) AS d,
            unnest($3::text[]) WITH ORDINALITY AS o(outcome, n)`,
    [counters.accountIds, counters.last, counters.outcomes, counters.days],
  );
}
