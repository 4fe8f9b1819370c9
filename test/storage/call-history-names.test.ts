// The Calls list's name search of a few names with thousands of matches: it reads a number of index entries and rows
// bounded by the page and the prefix's distinct names, not by its matches, whether they are spread over the whole
// history (a first name) or all old; with its values and as the generic plan a prepared statement keeps. And the
// pages it gives are the newest matches, in order, page after page.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_NAMES_MAX, type CallHistoryFilters } from '../../src/storage/call-history.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  rowsReadFrom,
  vacuumAllVisible,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

const CALLS = 100_000;
const PAGE = 50;
const capture = new PlanCapture();
let client: pg.Client;
/** The service's storage as it runs (custom plans, then generic ones), and one that plans generically at once. */
let storages: PlannedStorage[] = [];
let big: string;
/** A client of the big account's agency, with Thomases of 160 other last names, none among the newest 300 calls. */
let client2: string;

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const tenant = await createTenant(storages[0]!.storage);
  big = tenant.accountId;
  // 100,000 calls over a year, one every 5 minutes newest first. Every 20th is a Thomas with one of 50 last names,
  // over the whole history (5,000 calls, 100 a name: more than a page takes of any one); of the oldest 10,000 the
  // others are a Zed with one of 40 (none among the newest); every other name is its own.
  const at = (from: string, ms: number) => new Date(Date.parse(from) - ms);
  await bulkInsertCalls(
    client,
    Array.from({ length: CALLS }, (_, i) => {
      const g = i + 1;
      return {
        accountId: big,
        agentId: tenant.agentId,
        phoneNumber: `+1415${String(g).padStart(7, '0')}`,
        name:
          g % 20 === 10
            ? `Thomas Last${Math.floor(g / 20) % 50}`
            : g > CALLS - 10_000
              ? `Zed Last${Math.floor(g / 20) % 40}`
              : `Caller ${g}`,
        status: 'completed' as const,
        createdAt: at('2054-11-01T00:00:00Z', g * 5 * 60_000),
      };
    }),
  );
  const other = await createClientTenant(storages[0]!.storage, big);
  client2 = other.accountId;
  await bulkInsertCalls(
    client,
    Array.from({ length: 2000 }, (_, i) => {
      const g = i + 1;
      return {
        accountId: client2,
        agentId: other.agentId,
        phoneNumber: `+1212${String(g).padStart(7, '0')}`,
        name: `Thomas Other${g % 160}`,
        status: 'completed' as const,
        createdAt: at('2054-10-30T00:00:00Z', g * 4 * 3_600_000 + 1_000),
      };
    }),
  );
  // As autovacuum leaves it: index-only scans read no table row for pages it marked all-visible.
  await vacuumAllVisible(client, 'calls');
});

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

/** The prefixes, with how many calls and distinct names they match. */
const SEARCHES = [
  { prefix: 'thomas', matches: CALLS / 20, names: 50, where: 'over the whole history' },
  { prefix: 'zed', matches: 10_000 - 10_000 / 20, names: 40, where: 'all older than the newest 90,000 calls' },
];

/** The newest `limit` calls of the big account whose name starts with `prefix`, below `before`, as SQL finds them. */
async function newestMatches(prefix: string, limit: number, before?: { createdAt: Date; id: string }) {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM calls WHERE account_id = $1 AND lower(name) LIKE $2 || '%'
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $5`,
    [big, prefix, before?.createdAt ?? null, before?.id ?? null, limit],
  );
  return rows.map((r) => r.id);
}

describe('a name search of a few names with thousands of matches', () => {
  it('the data is as described', async () => {
    for (const { prefix, matches, names } of SEARCHES) {
      const { rows } = await client.query<{ matches: number; names: number }>(
        `SELECT count(*)::int AS matches, count(DISTINCT lower(name))::int AS names FROM calls
          WHERE account_id = $1 AND lower(name) LIKE $2 || '%'`,
        [big, prefix],
      );
      expect(rows[0], prefix).toEqual({ matches, names });
    }
  });

  it('reads index entries and rows bounded by the page and its names, not its matches, however planned', async () => {
    capture.start();
    const read: Record<string, { entries: number; names: number }> = {};
    for (const { plans, storage } of storages)
      for (const { prefix, where, names } of SEARCHES) {
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const {
            result: { calls },
            plans: ran,
          } = await capture.plansDuring('search', () =>
            storage.history.listCallHistory({
              accountIds: [big],
              filters: { ...NO_CALL_FILTERS, namePrefix: prefix },
              limit: PAGE,
            }),
          );
          expect(calls).toHaveLength(PAGE);
          expect(ran.length, `${plans} ${prefix}: plans reported`).toBeGreaterThan(0);
          read[`${plans}, ${prefix} (${where}), run ${i + 1}`] = { entries: rowsReadFrom(ran, 'calls'), names };
        }
      }
    capture.stop();
    // Per request: the names of the prefix with each one's newest match (2 x its 50 or 40 names), the newest matches of the names
    // whose newest are the page's 51 newest (at most 51 + 50 + ... + 1 = 1,326 entries) and the page's rows (51).
    // Reading every match would be 5,000 and 9,500 entries.
    const rows = PAGE + 1;
    for (const [run, { entries, names }] of Object.entries(read))
      expect(entries, run).toBeLessThanOrEqual(2 * names + (rows * (rows + 1)) / 2 + rows);
  });

  it('gives the newest matches, in order, page after page', async () => {
    const storage = storages[0]!.storage;
    for (const { prefix } of SEARCHES) {
      let before: { createdAt: Date; id: string } | undefined;
      for (let page = 0; page < 3; page++) {
        const { calls, next } = await storage.history.listCallHistory({
          accountIds: [big],
          filters: { ...NO_CALL_FILTERS, namePrefix: prefix.toUpperCase() },
          ...(before ? { before } : {}),
          limit: PAGE,
        });
        expect(
          calls.map((c) => c.id),
          `${prefix}, page ${page + 1}`,
        ).toEqual(await newestMatches(prefix, PAGE, before));
        expect(next).not.toBeNull();
        before = next!;
      }
    }
  });

  it('with a date range, and with more names than it merges (every match read then), gives the same', async () => {
    const storage = storages[0]!.storage;
    // "caller 31" matches calls 31, 310-319, 3100-3199, ...: over a thousand names, each its own; one among the newest
    // 300 (too few to walk).
    const { rows } = await client.query<{ names: number }>(
      `SELECT count(DISTINCT lower(name))::int AS names FROM calls WHERE account_id = $1 AND lower(name) LIKE 'caller 31%'`,
      [big],
    );
    expect(rows[0]!.names).toBeGreaterThan(SEARCH_NAMES_MAX);
    const ranged: Partial<CallHistoryFilters> = {
      from: new Date('2054-06-01T00:00:00Z'),
      to: new Date('2054-07-01T00:00:00Z'),
    };
    for (const [prefix, filters] of [
      ['caller 31', {}],
      ['thomas', ranged],
    ] as const) {
      const { calls } = await storage.history.listCallHistory({
        accountIds: [big],
        filters: { ...NO_CALL_FILTERS, ...filters, namePrefix: prefix },
        limit: PAGE,
      });
      const { rows: expected } = await client.query<{ id: string }>(
        `SELECT id FROM calls WHERE account_id = $1 AND lower(name) LIKE $2 || '%'
            AND created_at >= coalesce($3::timestamptz, '-infinity') AND created_at < coalesce($4::timestamptz, 'infinity')
          ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
        [big, prefix, filters.from ?? null, filters.to ?? null],
      );
      expect(calls.length, prefix).toBeGreaterThan(0);
      expect(
        calls.map((c) => c.id),
        prefix,
      ).toEqual(expected.map((r) => r.id));
    }
  });
});

describe('a name search over an agency and its client', () => {
  it('merges the names of each account, more than SEARCH_NAMES_MAX together (50 and 160)', async () => {
    capture.start();
    const sentBefore = capture.statements.length;
    const { calls } = await capture.during('scope', () =>
      storages[0]!.storage.history.listCallHistory({
        accountIds: [big, client2],
        filters: { ...NO_CALL_FILTERS, namePrefix: 'thomas' },
        limit: PAGE,
      }),
    );
    capture.stop();
    const sent = capture.statements.slice(sentBefore).map((s) => s.name);
    expect(sent).toContain('oct_call_search_name_merge');
    expect(sent).not.toContain('oct_call_search_name_newest');
    const { rows } = await client.query<{ id: string; accountId: string }>(
      `SELECT id, account_id AS "accountId" FROM calls WHERE account_id = ANY($1) AND lower(name) LIKE 'thomas%'
        ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
      [[big, client2]],
    );
    expect(calls.map((c) => c.id)).toEqual(rows.map((r) => r.id));
    expect(new Set(rows.map((r) => r.accountId)).size).toBe(2);
  });
});
