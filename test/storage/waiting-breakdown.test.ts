// The Overview's breakdown of an account's waiting calls (oct_live_call_counts): for its window, for a scheduled_at,
// for a retry. An account with thousands of calls waiting for their window reads none of them, only its due,
// scheduled and retry-waiting ones, from the two partial indexes of waiting calls (migrations 20261129010000 and
// 20261128200001) and with no heap row after a VACUUM (the visibility map; autovacuum keeps it for the service), with
// its values and as the generic plan a prepared statement keeps. Each number equals a plain count, at any time.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls, type CallRow } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  renderPlan,
  rowsReadFrom,
  vacuumAllVisible,
  walk,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

/** Calls of the busy account waiting for their agent's window: a count of them would read every one. */
const FOR_WINDOW = 3_000;
/** The other tenant's calls waiting for a window. */
const OTHERS_WAITING = 2_000;
const HOUR = 3_600_000;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: Tenant;
let busy: string;
let quiet: string;
let other: Tenant;
let scope: string[];
const now = new Date(Math.floor(Date.now() / 1000) * 1000);
const everyAccount = () => [...scope, other.accountId];
const at = (hours: number) => new Date(now.getTime() + hours * HOUR).toISOString();

/** `count` calls of `accountId` in `status`, waiting (or not) as the columns say. */
async function insertCalls(
  accountId: string,
  agentId: string,
  count: number,
  columns: { status?: CallRow['status']; notBefore: string; scheduledAt?: string; nextAttemptAt?: string },
): Promise<void> {
  const date = (iso: string | undefined) => (iso === undefined ? null : new Date(iso));
  const notBefore = new Date(columns.notBefore);
  await bulkInsertCalls(
    client,
    Array.from({ length: count }, (_, i) => ({
      accountId,
      agentId,
      phoneNumber: `+1415${String(i + 1).padStart(7, '0')}`,
      status: columns.status ?? 'initiated',
      notBefore,
      expiresAt: new Date(notBefore.getTime() + 3 * 24 * HOUR),
      createdAt: new Date(at(-1)),
      scheduledAt: date(columns.scheduledAt),
      nextAttemptAt: date(columns.nextAttemptAt),
      attempt: columns.nextAttemptAt === undefined ? 1 : 2,
    })),
  );
}

/** Each account's numbers by the definitions, counting its calls one by one; those with a call active or waiting. */
async function counted(accountIds: string[], when: Date) {
  const { rows } = await client.query<{
    account_id: string;
    active: number;
    waiting: number;
    waiting_for_window: number;
    scheduled: number;
    waiting_for_retry: number;
  }>(
    `SELECT a.id AS account_id,
            count(c.id) FILTER (WHERE c.status IN ('dialing', 'in_progress'))::int AS active,
            count(c.id) FILTER (WHERE c.status = 'initiated')::int AS waiting,
            count(c.id) FILTER (WHERE c.status = 'initiated' AND c.next_attempt_at IS NULL AND c.not_before > $2
                                  AND (c.scheduled_at IS NULL OR c.scheduled_at <= $2))::int AS waiting_for_window,
            count(c.id) FILTER (WHERE c.status = 'initiated' AND c.next_attempt_at IS NULL AND c.scheduled_at > $2)::int AS scheduled,
            count(c.id) FILTER (WHERE c.status = 'initiated' AND c.next_attempt_at IS NOT NULL)::int AS waiting_for_retry
       FROM accounts a LEFT JOIN calls c ON c.account_id = a.id
      WHERE a.id = ANY($1::uuid[]) GROUP BY a.id
     HAVING count(c.id) FILTER (WHERE c.status IN ('initiated', 'dialing', 'in_progress')) > 0`,
    [accountIds, when],
  );
  return new Map(
    rows.map((r) => [
      r.account_id,
      {
        active: r.active,
        waiting: r.waiting,
        waitingForWindow: r.waiting_for_window,
        scheduled: r.scheduled,
        waitingForRetry: r.waiting_for_retry,
      },
    ]),
  );
}

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  agency = await createTenant(storage);
  busy = (await createClientTenant(storage, agency.accountId)).accountId;
  quiet = (await createClientTenant(storage, agency.accountId)).accountId;
  scope = [agency.accountId, busy, quiet];
  other = await createTenant(storage);
  const agent = agency.agentId;
  // The busy client: thousands waiting for the window, and a few of every other kind (the edges included).
  await insertCalls(busy, agent, FOR_WINDOW, { notBefore: at(20) });
  await insertCalls(busy, agent, 7, { notBefore: at(-0.5) }); // due: waiting for a slot
  await insertCalls(busy, agent, 5, { notBefore: at(30), scheduledAt: at(30) }); // scheduled
  await insertCalls(busy, agent, 2, { notBefore: at(-0.5), scheduledAt: at(2) }); // scheduled, an earlier not_before
  await insertCalls(busy, agent, 4, { notBefore: at(20), scheduledAt: at(-2) }); // its time came, its window not yet
  await insertCalls(busy, agent, 3, { notBefore: at(-2), scheduledAt: at(-2) }); // its time and window came: due
  await insertCalls(busy, agent, 6, { notBefore: at(1), nextAttemptAt: at(1) }); // waiting for a retry
  await insertCalls(busy, agent, 2, { notBefore: at(3), scheduledAt: at(-5), nextAttemptAt: at(3) }); // retry
  await insertCalls(busy, agent, 2, { status: 'dialing', notBefore: at(-1) });
  await insertCalls(busy, agent, 1, { status: 'in_progress', notBefore: at(-1) });
  await insertCalls(busy, agent, 500, { status: 'completed', notBefore: at(-1) });
  // The quiet client: two for the window, one due. The agency: none waiting.
  await insertCalls(quiet, agent, 2, { notBefore: at(5) });
  await insertCalls(quiet, agent, 1, { notBefore: at(-0.1) });
  await insertCalls(other.accountId, other.agentId, OTHERS_WAITING, { notBefore: at(10) });
  await vacuumAllVisible(client, 'calls');
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the Overview's breakdown of the waiting calls", () => {
  it('equals a count of the calls for every account, now and as time passes', async () => {
    const counts = await storages[0]!.storage.calls.liveCallCounts(scope, now);
    expect(counts.get(busy)).toEqual({
      active: 3,
      waiting: FOR_WINDOW + 29,
      waitingForWindow: FOR_WINDOW + 4,
      scheduled: 7,
      waitingForRetry: 8,
    });
    expect(counts.get(quiet)).toEqual({ active: 0, waiting: 3, waitingForWindow: 2, scheduled: 0, waitingForRetry: 0 });
    // Nothing active or waiting: absent (the Overview shows it as zeros), so an agency of a thousand quiet clients
    // gets a row for each busy one only.
    expect(counts.has(agency.accountId)).toBe(false);
    const all = everyAccount();
    // Before, at and after each edge the calls have (not_before, scheduled_at and next_attempt_at compare with it).
    for (const hours of [-6, -2, -0.5, -0.1, 0, 1, 2, 3, 5, 10, 20, 25, 30, 31, 100])
      for (const { plans, storage } of storages)
        expect(await storage.calls.liveCallCounts(all, new Date(at(hours))), `${plans}, now + ${hours} h`).toEqual(
          await counted(all, new Date(at(hours))),
        );
  });

  it('reads the due, scheduled and retry-waiting calls, from the indexes alone, and none waiting for a window', async () => {
    capture.start();
    const read: Record<string, { calls: number; heapFetches: number; scans: string[]; plan: string[] }> = {};
    for (const { plans, storage } of storages)
      // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
      for (let i = 0; i < 6; i++) {
        const { plans: ran } = await capture.plansDuring('counts', () =>
          storage.calls.liveCallCounts(everyAccount(), now),
        );
        expect(ran.length, `${plans}: plans reported`).toBeGreaterThan(0);
        const scans: string[] = [];
        let heapFetches = 0;
        for (const plan of ran)
          walk(plan, (node) => {
            if (node['Relation Name'] !== 'calls') return;
            scans.push(`${node['Node Type']} using ${node['Index Name'] ?? '-'}`);
            heapFetches += Number(node['Heap Fetches'] ?? 0);
          });
        read[`${plans}, run ${i + 1}`] = {
          calls: rowsReadFrom(ran, 'calls'),
          heapFetches,
          scans,
          plan: ran.flatMap(renderPlan),
        };
      }
    capture.stop();
    // Counting each account's waiting calls read all 5,032 of them (3,029 of the busy client's alone).
    for (const [run, { calls, heapFetches, scans, plan }] of Object.entries(read)) {
      const why = `${run}\n${plan.join('\n')}`;
      // The busy client's 14 calls with a scheduled_at, 8 retry-waiting and 7 plain due ones, the quiet client's due
      // one and the 3 active calls: 33 index entries (EXPLAIN gives a scan's rows per loop, rounded: a few more).
      expect(calls, why).toBeLessThanOrEqual(33 + 3 * everyAccount().length);
      expect(heapFetches, why).toBe(0);
      for (const scan of scans) expect(scan, why).toMatch(/^Index Only Scan using /);
    }
  });
});
