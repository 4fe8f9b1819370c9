// The Overview's "today" read from the outcome counters: each account's outcomes and an agency's ranking sum the
// calls that ended from the viewer's local midnight to now, in any zone (Los Angeles, Kolkata at +05:30, UTC), as
// whole UTC days (call_outcome_days) plus or minus one range of quarter hours (call_outcome_quarters, 20261202110000),
// whichever reads fewer quarters (src/storage/overview-today.ts): index ranges (an account's by its primary keys, an
// agency's scope by (agency_id, day) and (agency_id, quarter)), with its values and as the generic plan; another
// tenant's counters and other quarters are never read nor counted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_REASONS } from '../../schemas/vocabulary.js';
import { todayTerms } from '../../src/storage/overview-today.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import {
  insertClients,
  insertOutcomeQuarters,
  setOutcomeQuarter,
  sumOutcomeDays,
  varyOutcomeQuarters,
} from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

/** An agency's clients, each with counters in every quarter of 48 hours (QUARTER_CLIENTS: more, to measure). */
const CLIENTS = Number(process.env.QUARTER_CLIENTS ?? 60);
/** Another agency's clients, with as many counters each: the scope is a tenth of the table, as it would be less. */
const OTHERS = 10 * CLIENTS;
const OUTCOMES = ['completed', 'busy', 'agent:booked'];
/** 07:30 UTC: 23:30 the day before in Los Angeles (PST), 13:00 in Kolkata (IST). */
const NOW = new Date('2056-03-02T07:30:00Z');
/**
 * Each zone's midnight before NOW, how many quarters from it to NOW's (both included), and how many of them the read
 * takes from the quarter counters: Los Angeles the 32 from 00:00 to 08:00 UTC, less (yesterday's day counters less
 * those); Kolkata the 22 from 18:30 to 00:00 UTC (and today's day counters); UTC none (today's day counters).
 */
const MIDNIGHTS = {
  'America/Los_Angeles': [new Date('2056-03-01T08:00:00Z'), 95, 32],
  'Asia/Kolkata': [new Date('2056-03-01T18:30:00Z'), 53, 22],
  UTC: [new Date('2056-03-02T00:00:00Z'), 31, 0],
} as const;
const HOUR_MS = 3_600_000;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: string;
let clients: string[];
let other: string;

const none = () => Object.fromEntries(FAILURE_REASONS.map((r) => [r, 0]));

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  agency = (await createTenant(storage, { name: 'Agency' })).accountId;
  clients = [];
  for (let i = 0; i < CLIENTS; i++)
    clients.push(
      (await createClientTenant(storage, agency, { name: `Client ${String(i).padStart(4, '0')}` })).accountId,
    );
  other = (await createTenant(storage, { name: 'Other' })).accountId;
  const others = await insertClients(client, { agencyId: other, prefix: 'Other ', count: OTHERS });
  // The counters are the state under test: one call of each outcome in every quarter of the 48 hours to NOW.
  await insertOutcomeQuarters(client, {
    accountIds: [agency, ...clients, other, ...others.map((o) => o.accountId)],
    outcomes: OUTCOMES,
    last: NOW,
    count: 192,
  });
  // The last client ended 100 calls at 09:00 UTC on the 1st: Los Angeles' today, no other zone's.
  await setOutcomeQuarter(client, {
    accountId: clients.at(-1)!,
    quarter: new Date('2056-03-01T09:00:00Z'),
    outcome: 'completed',
    calls: 101,
  });
  await sumOutcomeDays(client);
  await client.query('ANALYZE call_outcome_quarters');
  await client.query('ANALYZE call_outcome_days');
}, 600_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the Overview's today from the quarter counters", () => {
  it("sums each account's quarters from the zone's midnight to now, and nothing of older quarters", async () => {
    const overview = storages[0]!.storage.overview;
    for (const [zone, [from, quarters]] of Object.entries(MIDNIGHTS)) {
      const outcomes = await overview.outcomesOfDay([agency, clients[0]!, other], { from, to: NOW });
      for (const id of [agency, clients[0]!, other])
        expect(outcomes.get(id), zone).toEqual({ completed: quarters, failed: { ...none(), busy: quarters } });
    }
  });

  it('sums to the quarters from any quarter-hour midnight of the last day, whichever counters it reads', async () => {
    const overview = storages[0]!.storage.overview;
    // Counters that differ from quarter to quarter (and days that sum them), so that a term read twice or left out
    // shows.
    await varyOutcomeQuarters(client, other);
    await sumOutcomeDays(client);
    for (let q = 0; q < 96; q++) {
      const from = new Date(NOW.getTime() - q * 900_000);
      const {
        rows: [direct],
      } = await client.query<{ calls: number }>(
        `SELECT sum(calls)::int AS calls FROM call_outcome_quarters
          WHERE account_id = $1 AND outcome = 'completed' AND quarter >= $2 AND quarter <= $3`,
        [other, from, NOW],
      );
      const read = await overview.outcomesOfDay([other], { from, to: NOW });
      expect(read.get(other)?.completed, from.toISOString()).toBe(direct!.calls);
    }
  });

  it("ranks an agency's clients by the zone's today", async () => {
    const overview = storages[0]!.storage.overview;
    const scope = { accountId: agency, kind: 'agency' } as const;
    const since = new Date(NOW.getTime() - HOUR_MS);
    const names = async (zone: keyof typeof MIDNIGHTS) =>
      (await overview.rankedAccounts(scope, 3, { from: MIDNIGHTS[zone][0], to: NOW }, since)).accounts.map(
        (a) => a.name,
      );
    // Every client has as many calls as the next, but the last one's 100 more: Los Angeles' today only.
    const last = `Client ${String(CLIENTS - 1).padStart(4, '0')}`;
    expect(await names('America/Los_Angeles')).toEqual(['Agency', last, 'Client 0000', 'Client 0001']);
    expect(await names('UTC')).toEqual(['Agency', 'Client 0000', 'Client 0001', 'Client 0002']);
    expect(await names('Asia/Kolkata')).toEqual(['Agency', 'Client 0000', 'Client 0001', 'Client 0002']);
  });

  it("reads only the scope's quarters since the midnight, however planned", async () => {
    capture.start();
    const read: Record<string, { quarters: number; days: number }> = {};
    for (const { plans, storage } of storages)
      for (const [zone, [from]] of Object.entries(MIDNIGHTS))
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const today = { from, to: NOW };
          const { plans: ranking } = await capture.plansDuring('ranked', () =>
            storage.overview.rankedAccounts({ accountId: agency, kind: 'agency' }, 50, today, NOW),
          );
          const { plans: shown } = await capture.plansDuring('outcomes', () =>
            storage.overview.outcomesOfDay(clients.slice(0, 50), today),
          );
          expect(ranking.length + shown.length).toBeGreaterThan(0);
          expect(rowsReadFrom([...ranking, ...shown], 'calls'), `${plans}, ${zone}`).toBe(0);
          read[`${plans}, ${zone}, ranked, run ${i + 1}`] = {
            quarters: rowsReadFrom(ranking, 'call_outcome_quarters'),
            days: rowsReadFrom(ranking, 'call_outcome_days'),
          };
          read[`${plans}, ${zone}, outcomes, run ${i + 1}`] = {
            quarters: rowsReadFrom(shown, 'call_outcome_quarters'),
            days: rowsReadFrom(shown, 'call_outcome_days'),
          };
        }
    capture.stop();
    for (const [run, rows] of Object.entries(read)) {
      const quarters = MIDNIGHTS[Object.keys(MIDNIGHTS).find((z) => run.includes(z)) as keyof typeof MIDNIGHTS][2];
      const accounts = run.includes('ranked') ? 1 + CLIENTS : 50;
      // The scope's quarters of the range, and at most one more at its edge per account and outcome: never the other
      // tenant's, nor the others of the 192 each account has. Its counters of one or two days (of 3).
      expect(rows.quarters, run).toBeLessThanOrEqual((quarters === 0 ? 0 : quarters + 1) * OUTCOMES.length * accounts);
      expect(rows.quarters, run).toBeGreaterThanOrEqual(quarters * OUTCOMES.length * Math.min(accounts, 50));
      expect(rows.days, run).toBeLessThanOrEqual(2 * OUTCOMES.length * accounts);
    }
  });

  // A measurement, not a test (QUARTER_CLIENTS set): the statements' times without plans reported, median of 21.
  it.runIf(process.env.QUARTER_CLIENTS)('is measured', async () => {
    const { OUTCOMES: OUTCOMES_SQL, RANKED } = await import('../../src/storage/overview-statements.js');
    const session = new pg.Client({
      connectionString: `postgresql://${client.user}@${client.host}:${client.port}/${client.database}`,
    });
    await session.connect();
    await session.query('SET auto_explain.log_min_duration = -1');
    const median = async (run: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 21; i++) {
        const started = performance.now();
        await run();
        times.push(performance.now() - started);
      }
      return times.sort((x, y) => x - y)[10]!.toFixed(2);
    };
    const since = new Date(NOW.getTime() - HOUR_MS);
    for (const [zone, [from]] of Object.entries(MIDNIGHTS)) {
      const { days, quarters: q } = todayTerms({ from, to: NOW });
      const ranked = await median(() =>
        session.query({
          ...RANKED,
          values: [agency, agency, 50, days?.first, since, days?.last, q.from, q.until, q.sign],
        }),
      );
      const shown = await median(() =>
        session.query({
          ...OUTCOMES_SQL,
          values: [[agency, ...clients.slice(0, 50)], days?.first, days?.last, q.from, q.until, q.sign],
        }),
      );
      console.log(`${zone}: ranked ${ranked} ms, outcomes of 51 accounts ${shown} ms (1 + ${CLIENTS} accounts)`);
    }
    await session.end();
  });
});

describe('which counters sum to a local day (todayTerms)', () => {
  it('gives, for every quarter-hour midnight up to 25 hours back, the sum of its quarters, at most 48 of them', () => {
    // Calls ending in each quarter of three days: a different count in each (none after now, as in the service).
    const start = Date.parse('2056-10-31T00:00:00Z');
    const calls = (quarter: number) => 1 + ((quarter * 7919) % 13);
    for (const nowQuarter of [96 + 2, 96 + 48, 96 + 95, 2 * 96 - 1, 96]) {
      const now = new Date(start + nowQuarter * 900_000 + 420_000);
      const quarterOf = (at: number) => Math.floor((at - start) / 900_000);
      const day = (d: string) => {
        const first = quarterOf(Date.parse(`${d}T00:00:00Z`));
        let sum = 0;
        for (let q = first; q < first + 96 && q <= nowQuarter; q++) sum += calls(q);
        return sum;
      };
      for (let back = 0; back <= 100; back++) {
        const from = new Date(start + (nowQuarter - back) * 900_000);
        const { days, quarters } = todayTerms({ from, to: now });
        let sum = 0;
        for (let d = days ? Date.parse(days.first) : 1; days && d <= Date.parse(days.last); d += 86_400_000)
          sum += day(new Date(d).toISOString().slice(0, 10));
        for (let q = quarterOf(quarters.from.getTime()); q < quarterOf(quarters.until.getTime()); q++)
          sum += quarters.sign * calls(q);
        let direct = 0;
        for (let q = nowQuarter - back; q <= nowQuarter; q++) direct += calls(q);
        expect(sum, `${back} quarters before ${now.toISOString()}`).toBe(direct);
        expect(quarterOf(quarters.until.getTime()) - quarterOf(quarters.from.getTime())).toBeLessThanOrEqual(48);
        expect(quarters.from.getTime()).toBeGreaterThanOrEqual(now.getTime() - 48 * 3_600_000);
      }
    }
  });
});
