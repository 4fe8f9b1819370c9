// The Overview's count of today's outcomes for an agency of many clients: it reads each client's own calls that
// ended today and nothing else, with statistics from before the day's calls ended (as autovacuum leaves them until its
// next pass), with its values and as the generic plan a prepared statement keeps; and its counts are right.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_REASONS } from '../../schemas/vocabulary.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

const CLIENTS = 120;
/** Calls of another tenant that ended today: every one of them a row the count must not read. */
const OTHERS_TODAY = 20_000;
const DAY = { from: new Date('2026-11-20T00:00:00Z'), to: new Date('2026-11-21T00:00:00Z') };

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: Tenant;
let scope: string[];

/** `count` calls per account of `accounts` (an agent of `agentId`), ended at `endedAt` + i seconds. */
async function insertEnded(
  accounts: string[],
  agentId: string,
  count: number,
  endedAt: string,
  outcome: { status: string; reason: string | null },
) {
  await client.query(
    `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, failure_reason,
                        not_before, expires_at, created_at, updated_at, ended_at)
     SELECT gen_random_uuid(), a, $2::uuid, '+1415' || lpad(g::text, 7, '0'), '+14155550100', '{}'::json,
            $5::call_status, $6::failure_reason, t, t + interval '1 day', t, t, t
       FROM unnest($1::uuid[]) AS a, generate_series(1, $3::int) AS g
      CROSS JOIN LATERAL (SELECT $4::timestamptz + g * interval '1 second' AS t) AS t`,
    [accounts, agentId, count, endedAt, outcome.status, outcome.reason],
  );
}

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  agency = await createTenant(storage);
  const clients: string[] = [];
  for (let i = 0; i < CLIENTS; i++) clients.push((await createClientTenant(storage, agency.accountId)).accountId);
  scope = [agency.accountId, ...clients];
  const other = await createTenant(storage);
  // Yesterday's calls, then statistics: today's range is empty as far as the planner knows.
  await insertEnded([other.accountId], other.agentId, 5_000, '2026-11-19T08:00:00Z', {
    status: 'completed',
    reason: null,
  });
  await insertEnded(scope, agency.agentId, 3, '2026-11-19T23:00:00Z', { status: 'completed', reason: null });
  await client.query('ANALYZE calls');
  // Today: the other tenant's many, and a few of each account of the scope (one reason per client, in turn).
  await insertEnded([other.accountId], other.agentId, OTHERS_TODAY, '2026-11-20T06:00:00Z', {
    status: 'completed',
    reason: null,
  });
  await insertEnded(scope, agency.agentId, 2, '2026-11-20T09:00:00Z', { status: 'completed', reason: null });
  for (const [i, reason] of FAILURE_REASONS.entries())
    await insertEnded(
      clients.filter((_, n) => n % FAILURE_REASONS.length === i),
      agency.agentId,
      1,
      '2026-11-20T10:00:00Z',
      { status: 'failed', reason },
    );
  // Tomorrow's first second is not today's.
  await insertEnded(scope, agency.agentId, 1, '2026-11-20T23:59:59Z', { status: 'completed', reason: null });
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the Overview's outcomes of today for an agency of many clients", () => {
  it('counts each account’s calls that ended today, completed and failed by reason', async () => {
    const outcomes = await storages[0]!.storage.overview.outcomesBetween(scope, DAY.from, DAY.to);
    expect(outcomes.size).toBe(scope.length);
    expect(outcomes.get(agency.accountId)).toEqual({
      completed: 2,
      failed: Object.fromEntries(FAILURE_REASONS.map((r) => [r, 0])),
    });
    for (const [n, id] of scope.slice(1).entries()) {
      const reason = FAILURE_REASONS[n % FAILURE_REASONS.length]!;
      expect(outcomes.get(id), `client ${n}`).toEqual({
        completed: 2,
        failed: Object.fromEntries(FAILURE_REASONS.map((r) => [r, r === reason ? 1 : 0])),
      });
    }
  });

  it('reads only the scope’s calls that ended today, however planned', async () => {
    const scopeToday = 2 * scope.length + (scope.length - 1);
    capture.start();
    const read: Record<string, number> = {};
    for (const { plans, storage } of storages)
      // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
      for (let i = 0; i < 6; i++) {
        const plansBefore = capture.runtimePlans.length;
        await capture.during('outcomes', () => storage.overview.outcomesBetween(scope, DAY.from, DAY.to));
        const ran = capture.runtimePlans.slice(plansBefore).map((p) => p.plan);
        expect(ran.length, `${plans}: plans reported`).toBeGreaterThan(0);
        read[`${plans}, run ${i + 1}`] = ran.reduce((sum, p) => sum + rowsReadFrom(p, 'calls'), 0);
      }
    capture.stop();
    // EXPLAIN gives a node's rows per loop, rounded: one loop per account, so up to one row each either way. Reading
    // every call that ended today would be OTHERS_TODAY more (Prisma's groupBy read them all, each compared with every
    // id of the scope).
    for (const [run, rows] of Object.entries(read))
      expect(Math.abs(rows - scopeToday), run).toBeLessThanOrEqual(scope.length);
  });
});
