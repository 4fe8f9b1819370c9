// The Calls list's held filter and the consent export, as planned: held calls are read through their partial index
// calls_held (by account; an agency's whole scope by its accounts, a client's listed calls through its agency's held
// ones), never the accounts' other calls nor a sequential scan, with its values and as a generic plan; the export
// reads each owner's calls as one ordered range of its index, a batch at a time. Rows seeded in bulk (many calls, some
// held as only the dispatcher holds them).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryAccounts } from '../../src/storage/call-history.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls, type CallRow } from '../helpers/seed.js';
import {
  renderPlan,
  databaseReportingPlans,
  PlanCapture,
  rowsReadFrom,
  seqScansOfGrowingTables,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

const BIG = 20_000;
const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let agency: string;
let big: string;
let small: string;

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  const tenant = await createTenant(storage);
  agency = tenant.accountId;
  const bigClient = await createClientTenant(storage, agency);
  big = bigClient.accountId;
  small = (await createClientTenant(storage, agency)).accountId;
  // The big client: 20,000 calls, one in 1,000 waiting and held (20: one by the cap), one in 500 waiting unheld. The
  // agency: 10 calls its key placed on the big client's agent, listed for it, 3 of them held.
  const minutesBefore = (day: string, g: number) => new Date(Date.parse(day) - g * 60_000);
  const HOUR = 3_600_000;
  await bulkInsertCalls(client, [
    ...Array.from({ length: BIG }, (_, i): CallRow => {
      const g = i + 1;
      const at = minutesBefore('2057-01-10T00:00:00Z', g);
      const held = g % 1000 === 7;
      return {
        accountId: big,
        agentId: bigClient.agentId,
        phoneNumber: `+1415${String(g).padStart(7, '0')}`,
        status: held || g % 500 === 3 ? 'initiated' : 'completed',
        heldBy: g === 7 ? 'cap' : held ? 'calling_rules' : null,
        compliance: held
          ? [{ attempt: 1, verdict: 'held', reasons: ['US-FL: 8:00–20:00, 07:42 now in America/New_York'] }]
          : null,
        createdAt: at,
        notBefore: new Date(at.getTime() + 10 * HOUR),
        expiresAt: new Date(at.getTime() + 72 * HOUR),
      };
    }),
    ...Array.from({ length: 10 }, (_, i): CallRow => {
      const g = i + 1;
      const at = minutesBefore('2057-01-05T00:00:00Z', g);
      return {
        accountId: agency,
        agentId: bigClient.agentId,
        listedForAccountId: big,
        phoneNumber: `+13055550${String(g).padStart(3, '0')}`,
        status: g <= 3 ? 'initiated' : 'completed',
        heldBy: g <= 3 ? 'calling_rules' : null,
        createdAt: at,
        expiresAt: new Date(at.getTime() + 72 * HOUR),
      };
    }),
  ]);
  await client.query('ANALYZE');
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

const SCOPES: [string, () => HistoryAccounts, number][] = [
  ['by account', () => ({ accountIds: [big] }), 20],
  ["an agency's whole scope", () => ({ agencyId: agency }), 23],
  ['a client with its listed calls', () => ({ accountIds: [big], listedFor: [big] }), 23],
  ['a quiet client', () => ({ accountIds: [small], listedFor: [small] }), 0],
];

describe('the Calls list of held calls', () => {
  it('reads them through calls_held, however the statements are planned', async () => {
    capture.start();
    for (const { plans, storage } of storages)
      for (const [scope, accounts, expected] of SCOPES)
        for (let i = 0; i < 6; i++) {
          const {
            result: { calls },
            plans: ran,
          } = await capture.plansDuring('held', () =>
            storage.history.listCallHistory({ ...accounts(), filters: { ...NO_CALL_FILTERS, held: true }, limit: 50 }),
          );
          const run = `${plans}, ${scope}, run ${i + 1}`;
          expect(calls, run).toHaveLength(expected);
          for (const c of calls) {
            expect(c.status, run).toBe('initiated');
            expect(c.heldBy, run).not.toBeNull();
          }
          const text = JSON.stringify(ran);
          if (expected > 0) expect(text, run).toMatch(/calls_held/);
          for (const plan of ran) expect(seqScansOfGrowingTables(plan), run).toEqual([]);
          // The held calls twice at most (their ids, then their rows), never the 20,000.
          for (const plan of ran) expect(rowsReadFrom(plan, 'calls'), run).toBeLessThanOrEqual(2 * 23 + 2);
        }
    capture.stop();
  });

  it('carries the hold and its reason, pages newest first, and applies the other filters', async () => {
    const storage = storages[0]!.storage;
    const filters = { ...NO_CALL_FILTERS, held: true };
    const first = await storage.history.listCallHistory({ accountIds: [big], filters, limit: 15 });
    expect(first.calls).toHaveLength(15);
    const rest = await storage.history.listCallHistory({ accountIds: [big], filters, limit: 15, before: first.next! });
    expect(rest.calls).toHaveLength(5);
    expect(rest.next).toBeNull();
    const all = [...first.calls, ...rest.calls];
    expect(all.map((c) => c.createdAt.getTime())).toEqual(
      [...all].map((c) => c.createdAt.getTime()).sort((a, b) => b - a),
    );
    const capped = all.find((c) => c.heldBy === 'cap')!;
    expect(capped.phoneNumber).toBe('+14150000007');
    expect(capped.heldReason).toBe('US-FL: 8:00–20:00, 07:42 now in America/New_York');
    const numbered = await storage.history.listCallHistory({
      accountIds: [big],
      filters: { ...filters, numberPrefix: '+14150001' },
      limit: 50,
    });
    expect(numbered.calls.map((c) => c.phoneNumber)).toEqual(['+14150001007']);
    expect(
      (
        await storage.history.listCallHistory({
          accountIds: [big],
          filters: { ...filters, status: 'failed' },
          limit: 50,
        })
      ).calls,
    ).toEqual([]);
  });
});

describe('the consent export', () => {
  it('reads each owner’s calls as a range of its index, a batch at a time, whole', async () => {
    const scopes: [string, HistoryAccounts, number][] = [
      ['a client and its listed calls', { accountIds: [big], listedFor: [big] }, BIG + 10],
      ["an agency's whole scope", { agencyId: agency }, BIG + 10],
    ];
    for (const { plans, storage } of storages)
      for (const [scope, owners, expected] of scopes) {
        capture.start();
        const ids = new Set<string>();
        let batches = 0;
        const { plans: ran } = await capture.plansDuring('export', async () => {
          for await (const batch of storage.history.eachCallForExport(
            owners,
            new Date('2056-12-01T00:00:00Z'),
            new Date('2057-01-11T00:00:00Z'),
          )) {
            batches++;
            for (const c of batch) ids.add(c.id);
          }
        });
        capture.stop();
        const run = `${plans}, ${scope}`;
        expect(ids.size, run).toBe(expected);
        expect(batches, run).toBe(Math.ceil(expected / 1000));
        for (const plan of ran)
          expect(seqScansOfGrowingTables(plan), `${run}\n${renderPlan(plan).join('\n')}`).toEqual([]);
        // A batch reads its batch (and one more per branch to know where it stops), not the period.
        for (const plan of ran) expect(rowsReadFrom(plan, 'calls'), run).toBeLessThanOrEqual(3 * 1001 + 1000);
      }
  });
});
