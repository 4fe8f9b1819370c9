// The Overview chart's read: a scope's calls per UTC day by outcome over 7 or 30 days, summed from the outcome
// counters (never the calls), one index range of the scope's counters in those days (an agency's by agency_id and
// day, a client's by its primary key), with its values and as the generic plan; another tenant's counters are never
// read nor counted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DayOutcome } from '../../src/storage/index.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { insertOutcomeDays } from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

/** An agency's clients, each with counters on each of 31 days (CHART_CLIENTS: more, to measure). */
const CLIENTS = Number(process.env.CHART_CLIENTS ?? 150);
const OUTCOMES = ['completed', 'busy', 'no_answer', 'voicemail', 'canceled', 'agent:booked', 'agent:not_interested'];
const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: string;
let aClient: string;
let other: string;

/** The sum of `rows` per outcome. */
const totals = (rows: DayOutcome[]) =>
  rows.reduce<Record<string, number>>((t, r) => ({ ...t, [r.outcome]: (t[r.outcome] ?? 0) + r.calls }), {});

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  agency = (await createTenant(storage)).accountId;
  const clients: string[] = [];
  for (let i = 0; i < CLIENTS; i++) clients.push((await createClientTenant(storage, agency)).accountId);
  aClient = clients[0]!;
  other = (await createTenant(storage)).accountId;
  // Every counter on each of the 31 days to the 11th: calls = 1 + (day index + outcome index) % 5.
  await insertOutcomeDays(client, {
    accountIds: [agency, ...clients, other],
    outcomes: OUTCOMES,
    last: '2058-03-11',
    days: 31,
  });
  await client.query('ANALYZE call_outcome_days');
}, 300_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the Overview chart's read", () => {
  it("sums the scope's counters per day and outcome, and no one else's", async () => {
    const overview = storages[0]!.storage.overview;
    const week = await overview.outcomesByDay({ accountId: agency, kind: 'agency' }, '2058-03-05', '2058-03-11');
    expect(new Set(week.map((r) => r.day)).size).toBe(7);
    expect(week).toHaveLength(7 * OUTCOMES.length);
    // Day index d (0 today) and outcome n (1-based): 1 + (d + n) % 5 calls for each of the 1 + CLIENTS accounts.
    const today = week.find((r) => r.day === '2058-03-11' && r.outcome === 'busy')!;
    expect(today.calls).toBe((1 + CLIENTS) * (1 + ((0 + 2) % 5)));
    const ofClient = await overview.outcomesByDay({ accountId: aClient, kind: 'client' }, '2058-02-10', '2058-03-11');
    expect(ofClient).toHaveLength(30 * OUTCOMES.length);
    expect(ofClient.find((r) => r.day === '2058-03-11' && r.outcome === 'busy')!.calls).toBe(1 + ((0 + 2) % 5));
    const ofOther = await overview.outcomesByDay({ accountId: other, kind: 'agency' }, '2058-02-10', '2058-03-11');
    expect(totals(ofOther)).toEqual(totals(ofClient));
  });

  it("reads only the scope's counters of those days, however planned", async () => {
    capture.start();
    const read: Record<string, { calls: number; counters: number; ms: number }> = {};
    for (const { plans, storage } of storages)
      for (const [scope, kind, days, first] of [
        ['agency', 'agency', 7, '2058-03-05'],
        ['agency', 'agency', 30, '2058-02-10'],
        ['client', 'client', 30, '2058-02-10'],
      ] as const)
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const accountId = scope === 'agency' ? agency : aClient;
          const started = performance.now();
          const { plans: ran } = await capture.plansDuring('chart', () =>
            storage.overview.outcomesByDay({ accountId, kind }, first, '2058-03-11'),
          );
          const ms = performance.now() - started;
          expect(ran.length).toBeGreaterThan(0);
          read[`${plans}, ${scope}, ${days} days, run ${i + 1}`] = {
            calls: rowsReadFrom(ran, 'calls'),
            counters: rowsReadFrom(ran, 'call_outcome_days'),
            ms,
          };
        }
    capture.stop();
    for (const [run, rows] of Object.entries(read)) {
      expect(rows.calls, run).toBe(0);
      const days = run.includes('30 days') ? 30 : 7;
      const accounts = run.includes('agency') ? 1 + CLIENTS : 1;
      // The scope's counters of those days, and the range's edges at most (never the other tenant's, nor older days).
      expect(rows.counters, run).toBeLessThanOrEqual((days + 1) * OUTCOMES.length * accounts);
    }
    if (process.env.CHART_CLIENTS) console.log(JSON.stringify(read, null, 1));
  });

  // A measurement, not a test (CHART_CLIENTS set): the statement's time without plans reported, median of 21 runs.
  it.runIf(process.env.CHART_CLIENTS)('is measured', async () => {
    const { DAY_OUTCOMES } = await import('../../src/storage/overview-chart.js');
    const session = new pg.Client({
      connectionString: `postgresql://${client.user}@${client.host}:${client.port}/${client.database}`,
    });
    await session.connect();
    await session.query('SET auto_explain.log_min_duration = -1');
    for (const [kind, accountId, first] of [
      ['agency', agency, '2058-03-05'],
      ['agency', agency, '2058-02-10'],
      ['client', aClient, '2058-02-10'],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < 21; i++) {
        const started = performance.now();
        await session.query({ ...DAY_OUTCOMES[kind], values: [accountId, first, '2058-03-11'] });
        times.push(performance.now() - started);
      }
      times.sort((x, y) => x - y);
      console.log(`chart ${kind} from ${first}: median ${times[10]!.toFixed(2)} ms, max ${times[20]!.toFixed(2)} ms`);
    }
    await session.end();
  });
});
