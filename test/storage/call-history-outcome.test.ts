// The Calls list filtered by the runtime's outcome: a page is read from the partial (account_id | agency_id, outcome,
// created_at, id) indexes in order, a page of entries whether the outcome is common or rare, never the account's
// calls (nor a sequential scan), with its values and as the generic plan a prepared statement keeps; by an account,
// by an agency's whole scope, and beside a search. The rows carry their outcome.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallHistoryFilters, HistoryAccounts } from '../../src/storage/call-history.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertAgencies, type CallRow } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  rowsReadFrom,
  seqScansOfGrowingTables,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

const BIG = 40_000;

/**
 * `n` completed calls of `owner`, a minute apart back from 2054-11-01 (the gth: +1415 and g, "Thomas g" for one in
 * ten, else "Caller g"), with the runtime's outcome of one in 40 "booked", one in 4 "not_interested", and the one
 * before the BIGth "callback_later".
 */
function completedCalls(owner: { accountId: string; agentId: string }, n: number): CallRow[] {
  return Array.from({ length: n }, (_, i) => {
    const g = i + 1;
    const at = new Date(Date.parse('2054-11-01T00:00:00Z') - g * 60_000);
    return {
      accountId: owner.accountId,
      agentId: owner.agentId,
      phoneNumber: `+1415${String(g).padStart(7, '0')}`,
      name: `${g % 10 === 3 ? 'Thomas' : 'Caller'} ${g}`,
      status: 'completed',
      outcome: g === BIG - 1 ? 'callback_later' : g % 40 === 0 ? 'booked' : g % 4 === 1 ? 'not_interested' : null,
      createdAt: at,
    };
  });
}
const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: string;
let big: string;

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  const tenant = await createTenant(storage);
  agency = tenant.accountId;
  const bigClient = await createClientTenant(storage, agency);
  big = bigClient.accountId;
  // 200 small accounts of 20 calls (another tenant each; the agency has 20 too) and the agency's client of 40,000: one
  // call in 40 booked (the newest too), one in 4 not interested, a single one "callback_later" (the next to oldest),
  // the rest without a result.
  const small = await insertAgencies(client, { prefix: 'Small ', count: 200, agentName: 'Agent' });
  await bulkInsertCalls(client, [
    ...completedCalls(tenant, 20),
    ...completedCalls(bigClient, BIG),
    ...small.flatMap((a) => completedCalls({ accountId: a.accountId, agentId: a.agentId! }, 20)),
  ]);
  await client.query('ANALYZE');
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

const SCOPES: [string, () => HistoryAccounts][] = [
  ['by account', () => ({ accountIds: [big] })],
  ["an agency's whole scope", () => ({ agencyId: agency })],
];
// The last member: whether the page must come from the outcome indexes. With a status besides, a generic plan may take
// the (account_id, status, created_at) index instead (seen once in CI): index-backed and bounded by the status, so
// only the absence of a sequential scan is required there.
const FILTERS: [string, Partial<CallHistoryFilters>, number, boolean][] = [
  ['a common outcome', { outcome: 'booked' }, 50, true],
  ['a rare outcome', { outcome: 'callback_later' }, 1, true],
  ['an outcome and a status', { outcome: 'booked', status: 'completed' }, 50, false],
];

describe('the Calls list by outcome', () => {
  it('reads a page from the outcome indexes, however the statements are planned', async () => {
    capture.start();
    const read: Record<string, number> = {};
    for (const { plans, storage } of storages)
      for (const [scope, accounts] of SCOPES)
        for (const [what, filter, expected, outcomeIndex] of FILTERS)
          // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
          for (let i = 0; i < 6; i++) {
            const {
              result: { calls },
              plans: ran,
            } = await capture.plansDuring('outcome', () =>
              storage.history.listCallHistory({
                ...accounts(),
                filters: { ...NO_CALL_FILTERS, ...filter },
                limit: 50,
              }),
            );
            const run = `${plans}, ${scope}, ${what}, run ${i + 1}`;
            expect(calls, run).toHaveLength(expected);
            expect(new Set(calls.map((c) => c.outcome)), run).toEqual(new Set([filter.outcome]));
            expect(ran.length, run).toBeGreaterThan(0);
            const text = JSON.stringify(ran);
            if (outcomeIndex) expect(text, run).toMatch(/calls_(account|agency)_outcome_idx/);
            for (const plan of ran) expect(seqScansOfGrowingTables(plan), run).toEqual([]);
            if (outcomeIndex) read[run] = Math.max(...ran.map((p) => rowsReadFrom(p, 'calls')));
          }
    capture.stop();
    // A page of 51 is 51 index entries; the account's calls of that outcome alone are 1,000, its calls 40,000.
    for (const [run, rows] of Object.entries(read)) expect(rows, run).toBeLessThanOrEqual(51 * 2);
  });

  it('keeps the outcome beside a search', async () => {
    const storage = storages[0]!.storage;
    for (const [, accounts] of SCOPES) {
      const { calls } = await storage.history.listCallHistory({
        ...accounts(),
        filters: { ...NO_CALL_FILTERS, outcome: 'booked', namePrefix: 'thomas' },
        limit: 50,
      });
      // Thomas is g % 10 = 3, booked g % 40 = 0: never both.
      expect(calls).toEqual([]);
      const { calls: notInterested } = await storage.history.listCallHistory({
        ...accounts(),
        filters: { ...NO_CALL_FILTERS, outcome: 'not_interested', namePrefix: 'caller 1' },
        limit: 50,
      });
      expect(notInterested.length).toBeGreaterThan(0);
      for (const c of notInterested) {
        expect(c.outcome).toBe('not_interested');
        expect(c.name!.startsWith('Caller 1')).toBe(true);
      }
    }
  });

  it("lists a scope's outcome labels, one index descent each", async () => {
    capture.start();
    for (const { plans, storage } of storages)
      for (const [scope, kind] of [
        [agency, 'agency'],
        [big, 'client'],
      ] as const)
        for (let i = 0; i < 6; i++) {
          const { result, plans: ran } = await capture.plansDuring('labels', () =>
            storage.history.outcomeLabels({ accountId: scope, kind }, 100),
          );
          const run = `${plans}, ${kind}, run ${i + 1}`;
          expect(result, run).toEqual(['booked', 'callback_later', 'not_interested']);
          expect(JSON.stringify(ran), run).toMatch(/calls_(account|agency)_outcome_idx/);
          for (const plan of ran) expect(seqScansOfGrowingTables(plan), run).toEqual([]);
          // Four descents of the index (three labels, and the one that finds no more): not 11,000 labelled calls.
          expect(Math.max(...ran.map((p) => rowsReadFrom(p, 'calls'))), run).toBeLessThanOrEqual(10);
        }
    capture.stop();
  });

  it('finds a call by its id only with its outcome', async () => {
    const storage = storages[0]!.storage;
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM calls WHERE account_id = $1 AND outcome = 'callback_later'`,
      [big],
    );
    const callId = rows[0]!.id;
    const found = (outcome: string) =>
      storage.history.findCallInHistory({ accountIds: [big], callId, filters: { ...NO_CALL_FILTERS, outcome } });
    expect((await found('callback_later')).map((c) => c.id)).toEqual([callId]);
    expect(await found('booked')).toEqual([]);
  });
});
