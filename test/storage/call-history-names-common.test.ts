// The Calls list's name search over an agency and its clients, for a prefix common enough among the newest calls that
// the list would walk to a page (5 or more of the newest 300 match) yet rare over all (1 call in 40): it merges the
// prefix's names (reads bounded by the names and the page) rather than walking a page of matches from every account
// (40 calls read for each match, 51 matches from each of 5 accounts). The page is the newest matches, in order.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_PROBE_ROWS } from '../../src/storage/call-history.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  rowsReadFrom,
  vacuumAllVisible,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

const ACCOUNTS = 5;
const CALLS = 6_000;
const PAGE = 50;
const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let accounts: string[];

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const storage = storages[0]!.storage;
  const agency = await createTenant(storage);
  const tenants = [agency];
  for (let i = 1; i < ACCOUNTS; i++) tenants.push(await createClientTenant(storage, agency.accountId));
  accounts = tenants.map((t) => t.accountId);
  // Each account 6,000 calls, one a minute newest first, interleaved across accounts; every 40th a Sarah with one of
  // 50 last names, the others each their own name.
  await bulkInsertCalls(
    client,
    tenants.flatMap((t, k) =>
      Array.from({ length: CALLS }, (_, i) => {
        const g = i + 1;
        return {
          accountId: t.accountId,
          agentId: t.agentId,
          phoneNumber: `+1415${String(g).padStart(7, '0')}`,
          name: g % 40 === 7 ? `Sarah Last${Math.floor(g / 40) % 50}` : `Caller ${g}`,
          status: 'completed' as const,
          createdAt: new Date(Date.parse('2054-11-01T00:00:00Z') - (g * ACCOUNTS + k + 1) * 60_000),
        };
      }),
    ),
  );
  await vacuumAllVisible(client, 'calls');
});

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

async function newestMatches(limit: number, before?: { createdAt: Date; id: string }): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM calls WHERE account_id = ANY($1) AND lower(name) LIKE 'sarah%'
        AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [accounts, before?.createdAt ?? null, before?.id ?? null, limit],
  );
  return rows.map((r) => r.id);
}

describe('a name search common among the newest calls, rare over all, over five accounts', () => {
  it('the data is as described: enough matches among the newest to walk, too few for a page', async () => {
    const { rows } = await client.query<{ matched: number }>(
      `SELECT count(*) FILTER (WHERE lower(name) LIKE 'sarah%')::int AS matched FROM (
         SELECT name FROM calls WHERE account_id = ANY($1) ORDER BY created_at DESC, id DESC LIMIT ${SEARCH_PROBE_ROWS}) n`,
      [accounts],
    );
    expect(rows[0]!.matched).toBeGreaterThanOrEqual(5);
    expect(rows[0]!.matched).toBeLessThan(PAGE);
  });

  it('reads the probe’s newest calls and the names’ merge, not a page of matches from every account', async () => {
    capture.start();
    const read: Record<string, number> = {};
    for (const { plans, storage } of storages)
      for (let i = 0; i < 6; i++) {
        const {
          result: { calls },
          plans: ran,
        } = await capture.plansDuring('search', () =>
          storage.history.listCallHistory({
            accountIds: accounts,
            filters: { ...NO_CALL_FILTERS, namePrefix: 'sarah' },
            limit: PAGE,
          }),
        );
        expect(calls).toHaveLength(PAGE);
        expect(ran.length, `${plans}: plans reported`).toBeGreaterThan(0);
        read[`${plans}, run ${i + 1}`] = rowsReadFrom(ran, 'calls');
      }
    capture.stop();
    // The merge reads each account's 50 names with their newest match (250 + 250), the newest matches of the names
    // whose newest are the page's (at most 1,326 entries; here 3 a name and account) and the page (51); the probe of
    // 300 newest calls of each account (1,500) only if the merge gives up. Walking a page of matches from each
    // account would read about 5 x 51 x 40 = 10,200 calls more.
    for (const [run, rows] of Object.entries(read))
      expect(rows, run).toBeLessThan(ACCOUNTS * SEARCH_PROBE_ROWS + 1_000);
  });

  it('gives the newest matches, in order, page after page', async () => {
    const storage = storages[0]!.storage;
    let before: { createdAt: Date; id: string } | undefined;
    for (let page = 0; page < 3; page++) {
      const { calls, next } = await storage.history.listCallHistory({
        accountIds: accounts,
        filters: { ...NO_CALL_FILTERS, namePrefix: 'SARAH' },
        ...(before ? { before } : {}),
        limit: PAGE,
      });
      expect(
        calls.map((c) => c.id),
        `page ${page + 1}`,
      ).toEqual(await newestMatches(PAGE, before));
      expect(next).not.toBeNull();
      before = next!;
    }
  });
});
