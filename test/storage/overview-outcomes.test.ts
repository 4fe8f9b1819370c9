// The Overview's outcomes of today: counters per account, UTC day and outcome that triggers on calls keep (migration
// 20261128100000), and per quarter hour of the last 48 hours beside them (20261202110000, which the Overview reads
// from the viewer's local midnight), so that an agency of many clients, or an account that ends thousands of calls a
// day, reads a few rows and no call, with its values and as the generic plan a prepared statement keeps. The counters
// follow every insert, update, delete and truncate of calls for today and the 30 days before (the chart's,
// 20261202090000; the quarters' 48 hours), the runtime's outcome labels of completed calls too ('agent:<label>'), and
// keep no older day or quarter.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_REASONS } from '../../schemas/vocabulary.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertOutcomeQuarters } from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

const CLIENTS = 120;
/** Calls of another tenant that ended today: counting the day's calls would read every one of them. */
const OTHERS_TODAY = 20_000;
const DAY_MS = 86_400_000;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: Tenant;
let other: Tenant;
let clients: string[];
let scope: string[];
/** Today, 00:00 UTC. */
let today: Date;
/** The UTC day that begins at `day`, as the Overview asks for a viewer in UTC. */
const dayFrom = (day: Date) => ({ from: day, to: new Date(day.getTime() + DAY_MS - 1) });
/** `days` days from today's start, plus `hours` hours, as an ISO string. */
const at = (days: number, hours = 0) => new Date(today.getTime() + days * DAY_MS + hours * 3_600_000).toISOString();

/** `count` calls per account of `accounts` (an agent of `agentId`), ended at `endedAt` + i seconds. Their ids. */
async function insertEnded(
  accounts: string[],
  agentId: string,
  count: number,
  endedAt: string,
  outcome: { status: 'initiated' | 'completed' | 'failed'; reason: string | null },
): Promise<string[]> {
  const ended = outcome.status !== 'initiated';
  return bulkInsertCalls(
    client,
    accounts.flatMap((accountId) =>
      Array.from({ length: count }, (_, i) => {
        const t = new Date(Date.parse(endedAt) + (i + 1) * 1000);
        return {
          accountId,
          agentId,
          phoneNumber: `+1415${String(i + 1).padStart(7, '0')}`,
          status: outcome.status,
          failureReason: outcome.reason,
          createdAt: t,
          endedAt: ended ? t : null,
        };
      }),
    ),
  );
}

/**
 * The counters as kept, and as counting the calls gives them: they must be equal, each with its account's agency (the
 * agency itself for its own), by which an agency's Overview reads them.
 */
async function keptAndCounted() {
  const kept = await client.query(
    `SELECT account_id, agency_id, day::text, outcome, calls FROM call_outcome_days ORDER BY account_id, day, outcome`,
  );
  const counted = await client.query(
    `SELECT c.account_id, coalesce(a.agency_id, a.id) AS agency_id, (c.ended_at AT TIME ZONE 'UTC')::date::text AS day,
            k.outcome, count(*)::int AS calls
       FROM calls c JOIN accounts a ON a.id = c.account_id
      CROSS JOIN LATERAL (VALUES (coalesce(c.failure_reason::text, c.status::text)),
                                 (CASE WHEN c.status = 'completed' THEN 'agent:' || c.outcome END)) AS k(outcome)
      WHERE k.outcome IS NOT NULL AND c.status IN ('completed', 'failed') AND c.ended_at >= $1::timestamptz
      GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4`,
    [at(-30)],
  );
  const keptQuarters = await client.query(
    `SELECT account_id, agency_id, quarter, outcome, calls FROM call_outcome_quarters ORDER BY account_id, quarter, outcome`,
  );
  const countedQuarters = await client.query(
    `SELECT c.account_id, coalesce(a.agency_id, a.id) AS agency_id,
            to_timestamp(floor(extract(epoch FROM c.ended_at) / 900) * 900) AS quarter, k.outcome, count(*)::int AS calls
       FROM calls c JOIN accounts a ON a.id = c.account_id
      CROSS JOIN LATERAL (VALUES (coalesce(c.failure_reason::text, c.status::text)),
                                 (CASE WHEN c.status = 'completed' THEN 'agent:' || c.outcome END)) AS k(outcome)
      WHERE k.outcome IS NOT NULL AND c.status IN ('completed', 'failed') AND c.ended_at >= oct_outcome_quarters_since()
      GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4`,
  );
  return { kept: [kept.rows, keptQuarters.rows], counted: [counted.rows, countedQuarters.rows] };
}

beforeAll(async () => {
  // The kept days are the database's today and the 30 before: not across midnight (UTC) while the test runs.
  const untilMidnight = DAY_MS - (Date.now() % DAY_MS);
  if (untilMidnight < 120_000) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1_000));
  today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  agency = await createTenant(storage);
  clients = [];
  for (let i = 0; i < CLIENTS; i++) clients.push((await createClientTenant(storage, agency.accountId)).accountId);
  scope = [agency.accountId, ...clients];
  other = await createTenant(storage);
  await insertEnded([other.accountId], other.agentId, OTHERS_TODAY, at(0, 0.5), { status: 'completed', reason: null });
  // The scope: two completed each today, one failure per client (one reason per client, in turn), three completed
  // yesterday and two 31 days ago (not kept).
  await insertEnded(scope, agency.agentId, 2, at(0, 0.25), { status: 'completed', reason: null });
  for (const [i, reason] of FAILURE_REASONS.entries())
    await insertEnded(
      clients.filter((_, n) => n % FAILURE_REASONS.length === i),
      agency.agentId,
      1,
      at(0, 0.2),
      { status: 'failed', reason },
    );
  await insertEnded(scope, agency.agentId, 3, at(-1, 10), { status: 'completed', reason: null });
  await insertEnded(scope, agency.agentId, 2, at(-31, 10), { status: 'completed', reason: null });
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

const none = () => Object.fromEntries(FAILURE_REASONS.map((r) => [r, 0]));

describe("the Overview's outcomes of a day", () => {
  it('counts each account’s calls that ended today, completed and failed by reason', async () => {
    const outcomes = await storages[0]!.storage.overview.outcomesOfDay(scope, dayFrom(today));
    expect(outcomes.size).toBe(scope.length);
    expect(outcomes.get(agency.accountId)).toEqual({ completed: 2, failed: none() });
    for (const [n, id] of clients.entries()) {
      const reason = FAILURE_REASONS[n % FAILURE_REASONS.length]!;
      expect(outcomes.get(id), `client ${n}`).toEqual({ completed: 2, failed: { ...none(), [reason]: 1 } });
    }
    expect(
      (await storages[0]!.storage.overview.outcomesOfDay([other.accountId], dayFrom(today))).get(other.accountId),
    ).toEqual({
      completed: OTHERS_TODAY,
      failed: none(),
    });
  });

  it('keeps yesterday and the days to 30 before today, and no day before them', async () => {
    const overview = storages[0]!.storage.overview;
    const yesterday = await overview.outcomesOfDay(scope, dayFrom(new Date(today.getTime() - DAY_MS)));
    expect(yesterday.get(clients[0]!)).toEqual({ completed: 3, failed: none() });
    expect((await overview.outcomesOfDay(scope, dayFrom(new Date(today.getTime() - 31 * DAY_MS)))).size).toBe(0);
    const { kept, counted } = await keptAndCounted();
    expect(kept).toEqual(counted);
    expect(kept[0]!.length).toBeGreaterThan(scope.length);
    expect(kept[1]!.length).toBeGreaterThan(scope.length);
  });

  it('reads a few counters and no call, however planned', async () => {
    capture.start();
    const read: Record<string, { calls: number; counters: number }> = {};
    for (const { plans, storage } of storages)
      // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
      for (let i = 0; i < 6; i++) {
        const { plans: ran } = await capture.plansDuring('outcomes', () =>
          storage.overview.outcomesOfDay(scope, dayFrom(today)),
        );
        expect(ran.length, `${plans}: plans reported`).toBeGreaterThan(0);
        read[`${plans}, run ${i + 1}`] = {
          calls: rowsReadFrom(ran, 'calls'),
          counters: rowsReadFrom(ran, 'call_outcome_quarters'),
        };
      }
    capture.stop();
    // Counting the day's calls read the scope's 362 of them, or every call that ended today (20,362).
    for (const [run, rows] of Object.entries(read)) {
      expect(rows.calls, run).toBe(0);
      // Each account's quarters of today: 1 or 2 (completed, a failure; each in one quarter).
      expect(rows.counters, run).toBeLessThanOrEqual(4 * scope.length);
    }
  });

  it('follows every change to the calls of the last 31 days, and none to older ones', async () => {
    const [waiting] = await insertEnded([clients[1]!], agency.agentId, 1, at(0, 0.1), {
      status: 'initiated',
      reason: null,
    });
    const [old] = await insertEnded([clients[1]!], agency.agentId, 1, at(-35), { status: 'completed', reason: null });
    const check = async (what: string) => {
      const { kept, counted } = await keptAndCounted();
      expect(kept, what).toEqual(counted);
    };
    await check('inserted');
    // Inline from here: what the counters' triggers make of any hand-written update or delete is the subject.
    // Ended now; another account's call of yesterday ended yesterday at another time.
    await client.query(`UPDATE calls SET status = 'completed', ended_at = $2 WHERE id = $1`, [waiting, at(0, 0.3)]);
    await check('ended');
    await client.query(
      `UPDATE calls SET status = 'failed', failure_reason = 'busy', ended_at = $2
        WHERE id = (SELECT id FROM calls WHERE account_id = $1 AND status = 'completed' ORDER BY ended_at LIMIT 1)`,
      [clients[2], at(-1, 11)],
    );
    await client.query(`UPDATE calls SET status = 'failed', failure_reason = 'busy', ended_at = $2 WHERE id = $1`, [
      waiting,
      at(0, 0.3),
    ]);
    await check('ended, then its outcome changed');
    // Many accounts' calls in one statement, in no particular order.
    await client.query(
      `UPDATE calls SET failure_reason = 'no_answer' WHERE status = 'failed' AND account_id = ANY($1::uuid[])`,
      [clients.slice(0, 40)],
    );
    await check('outcomes of 40 accounts changed at once');
    await client.query(`UPDATE calls SET ended_at = $2 WHERE id = $1`, [old, at(0, 0.4)]);
    await check('an old call moved to today');
    await client.query(`DELETE FROM calls WHERE id = $1 OR (account_id = $2 AND ended_at < $3)`, [
      waiting,
      clients[3],
      at(0),
    ]);
    await check('deleted');
    const counters = `SELECT (SELECT count(*) FROM call_outcome_days)::int AS days,
                             (SELECT count(*) FROM call_outcome_quarters)::int AS quarters`;
    const before = await client.query(counters);
    await client.query(`UPDATE calls SET name = 'Renamed' WHERE ended_at < $1`, [at(-30)]);
    await client.query(`DELETE FROM calls WHERE ended_at < $1`, [at(-30)]);
    expect((await client.query(counters)).rows).toEqual(before.rows);
    await check('older calls renamed and deleted');
    // The runtime's labels: given (the result's POST), changed, on a failed call (not counted), taken away.
    await client.query(
      `UPDATE calls SET outcome = CASE WHEN status = 'completed' THEN 'booked' ELSE 'not_counted' END
        WHERE account_id = ANY($1::uuid[])`,
      [clients.slice(0, 10)],
    );
    await check('labels given');
    expect(
      (await client.query(`SELECT sum(calls)::int AS n FROM call_outcome_days WHERE outcome LIKE 'agent:%'`)).rows[0],
    ).toEqual({ n: expect.any(Number) as number });
    await client.query(`UPDATE calls SET outcome = 'rebooked' WHERE account_id = $1 AND outcome IS NOT NULL`, [
      clients[0],
    ]);
    await check('a label changed');
    await client.query(`UPDATE calls SET outcome = NULL WHERE outcome IS NOT NULL`);
    await check('labels taken away');
    // No row of 0 is kept.
    expect((await client.query(counters.replaceAll(')::int', ' WHERE calls = 0)::int'))).rows[0]).toEqual({
      days: 0,
      quarters: 0,
    });
  });

  it('removes an account’s quarters older than 49 hours when it writes new ones, and no other account’s', async () => {
    // A quarter of 50 hours ago for two accounts, as the triggers wrote it then.
    const old = new Date(Date.now() - 50 * 3_600_000);
    await insertOutcomeQuarters(client, {
      accountIds: [clients[5]!, clients[6]!],
      outcomes: ['completed'],
      last: old,
      count: 1,
    });
    await insertEnded([clients[5]!], agency.agentId, 1, at(0, 0.5), { status: 'completed', reason: null });
    const { rows } = await client.query(
      `SELECT account_id FROM call_outcome_quarters WHERE quarter < now() - interval '49 hours'`,
    );
    expect(rows).toEqual([{ account_id: clients[6] }]);
  });

  it('is emptied with the calls', async () => {
    await client.query('TRUNCATE calls CASCADE');
    expect((await client.query(`SELECT count(*)::int AS n FROM call_outcome_days`)).rows[0]).toEqual({ n: 0 });
    expect((await client.query(`SELECT count(*)::int AS n FROM call_outcome_quarters`)).rows[0]).toEqual({ n: 0 });
  });
});
