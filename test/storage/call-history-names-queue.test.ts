// The Calls list's name search over an agency and its clients whose calls are waiting (a queue, as bench:scale's):
// the rows it reads from the table do not grow with the queue. The merge of the prefix's names, asked first, reads
// its index and the page's rows; the probe of the scope's newest calls, asked first until the nineteenth session,
// read 300 rows more (and before that SEARCH_PROBE_ROWS rows of every account, 1,500 for five).
// The same search over a queue of 500 calls and one of 12,000 reads the same rows, and the page is the newest matches.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_PROBE_ROWS } from '../../src/storage/call-history.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  heapRowsReadFrom,
  PlanCapture,
  rowsReadFrom,
  vacuumAllVisible,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

const ACCOUNTS = 5;
/** Waiting calls per account: a short queue, then a long one (each a scope of its own). */
const QUEUES = { short: 100, long: 2_400 } as const;
const PAGE = 50;
const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
const scopes: Record<keyof typeof QUEUES, string[]> = { short: [], long: [] };

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  const notBefore = new Date(Date.now() + 3 * 86_400_000);
  for (const [queue, perAccount] of Object.entries(QUEUES) as [keyof typeof QUEUES, number][]) {
    const agency = await createTenant(storage);
    const tenants = [agency];
    for (let i = 1; i < ACCOUNTS; i++) tenants.push(await createClientTenant(storage, agency.accountId));
    scopes[queue] = tenants.map((t) => t.accountId);
    // Waiting for their agent's window (initiated, not before three days from now), one a minute newest first,
    // interleaved across the accounts; every 8th a Kimberly with one of 20 last names, the others each their own name.
    const now = Date.now();
    await bulkInsertCalls(
      client,
      tenants.flatMap((t, k) =>
        Array.from({ length: perAccount }, (_, i) => {
          const g = i + 1;
          const createdAt = new Date(now - (g * ACCOUNTS + k + 1) * 60_000);
          return {
            accountId: t.accountId,
            agentId: t.agentId,
            phoneNumber: `+1415${String(g).padStart(7, '0')}`,
            name: g % 8 === 3 ? `Kimberly Last${Math.floor(g / 8) % 20}` : `Caller ${g}`,
            notBefore,
            createdAt,
          };
        }),
      ),
    );
  }
  await vacuumAllVisible(client, 'calls');
});

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

async function newestMatches(accounts: string[], limit: number): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM calls WHERE account_id = ANY($1) AND lower(name) LIKE 'kimberly%'
      ORDER BY created_at DESC, id DESC LIMIT $2`,
    [accounts, limit],
  );
  return rows.map((r) => r.id);
}

describe('a name search over waiting calls', () => {
  it('the data is as described: too few matches among the newest for a page, enough for the merge', async () => {
    for (const accounts of Object.values(scopes)) {
      const { rows } = await client.query<{ matched: number; waiting: number }>(
        `SELECT count(*) FILTER (WHERE lower(name) LIKE 'kimberly%')::int AS matched,
                count(*) FILTER (WHERE status = 'initiated' AND ended_at IS NULL)::int AS waiting FROM (
           SELECT name, status, ended_at FROM calls WHERE account_id = ANY($1)
            ORDER BY created_at DESC, id DESC LIMIT ${SEARCH_PROBE_ROWS}) n`,
        [accounts],
      );
      expect(rows[0]!.waiting).toBe(SEARCH_PROBE_ROWS);
      expect(rows[0]!.matched).toBeGreaterThanOrEqual(5);
      expect(rows[0]!.matched).toBeLessThan(PAGE);
      expect(await newestMatches(accounts, PAGE + 1)).toHaveLength(PAGE + 1);
    }
  });

  it('reads as many rows from the table over a queue of 12,000 as over one of 500', async () => {
    capture.start();
    const heap: Record<string, number> = {};
    const entries: Record<string, number> = {};
    for (const { plans, storage } of storages)
      for (const [queue, accounts] of Object.entries(scopes))
        for (let i = 0; i < 6; i++) {
          const {
            result: { calls },
            plans: ran,
          } = await capture.plansDuring('search', () =>
            storage.history.listCallHistory({
              accountIds: accounts,
              filters: { ...NO_CALL_FILTERS, namePrefix: 'kimberly' },
              limit: PAGE,
            }),
          );
          expect(calls).toHaveLength(PAGE);
          expect(ran.length, `${plans}: plans reported`).toBeGreaterThan(0);
          heap[`${plans}, ${queue} queue, run ${i + 1}`] = heapRowsReadFrom(ran, 'calls');
          entries[`${plans}, ${queue} queue, run ${i + 1}`] = rowsReadFrom(ran, 'calls');
        }
    capture.stop();
    // The page's 51 rows, from the merge of the name's 20 names, asked first; the probe of the newest calls asked
    // first read 300 rows more (and, reading SEARCH_PROBE_ROWS of every account, 500 over the short queue and 1,500
    // over the long one).
    for (const [run, rows] of Object.entries(heap)) {
      expect(rows, run).toBeLessThanOrEqual(2 * (PAGE + 1));
      if (run.includes('long')) expect(rows, run).toBeLessThanOrEqual(heap[run.replace('long', 'short')]!);
    }
    // From the indexes: at most SEARCH_PROBE_ROWS entries of each account, the names and the merge's steps.
    for (const [run, rows] of Object.entries(entries))
      expect(rows, run).toBeLessThan(ACCOUNTS * SEARCH_PROBE_ROWS + 1_000);
  });

  it('gives the newest matches, in order', async () => {
    for (const { plans, storage } of storages)
      for (const [queue, accounts] of Object.entries(scopes)) {
        const { calls, next } = await storage.history.listCallHistory({
          accountIds: accounts,
          filters: { ...NO_CALL_FILTERS, namePrefix: 'KIMBERLY' },
          limit: PAGE,
        });
        expect(
          calls.map((c) => c.id),
          `${plans}, ${queue} queue`,
        ).toEqual(await newestMatches(accounts, PAGE));
        expect(next).not.toBeNull();
      }
  });
});
