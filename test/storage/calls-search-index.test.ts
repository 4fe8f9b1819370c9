// The Calls list's searches read their own indexes (migrations 20261125020001-3): the metadata key/value
// the GIN index on metadata::jsonb (jsonb_path_ops containment), the number and the name prefix their byte-wise
// B-tree ranges; with their values and as the generic plans their prepared statements run with in production, on a
// table big enough for the planner to care (sequential scans allowed).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import '../../src/storage/call-history.js';
import { declaredStatements } from '../../src/storage/statements.js';
import { freshPrisma } from '../helpers/database.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { bulkInsertCalls } from '../helpers/seed.js';
import { vacuumAllVisible } from '../helpers/plan-capture.js';

let client: pg.Client;
let accounts: string[];

beforeAll(async () => {
  const { url, prisma } = await freshPrisma();
  const agency = await createTenant(prisma);
  const other = await createClientTenant(prisma, agency.accountId);
  accounts = [agency.accountId, other.accountId];
  client = new pg.Client({ connectionString: url });
  await client.connect();
  // 40,000 calls over the two accounts: every one with its own crm_id (as a number or a string), a name and a number.
  const now = Date.now();
  await bulkInsertCalls(
    client,
    Array.from({ length: 40_000 }, (_, i) => {
      const g = i + 1;
      const owner = g % 2 === 0 ? agency : other;
      return {
        accountId: owner.accountId,
        agentId: owner.agentId,
        phoneNumber: `+1415${String(g).padStart(7, '0')}`,
        name: `Caller ${g}`,
        metadataJson: g % 3 === 0 ? `{"crm_id":${g},"vip":false}` : `{"crm_id":"${g}"}`,
        status: 'completed' as const,
        notBefore: new Date(now),
        createdAt: new Date(now - g * 60_000),
        updatedAt: new Date(now),
      };
    }),
  );
  await client.query('ANALYZE calls');
  await prisma.$disconnect();
});

afterAll(() => client?.end());

async function plans(name: string, types: string, values: string): Promise<Record<string, string>> {
  const { text } = declaredStatements().find((s) => s.name === name)!;
  await client.query(`PREPARE searched(${types}) AS ${text}`);
  const found: Record<string, string> = {};
  try {
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE searched(${values})`);
      found[mode] = rows.map((r) => r['QUERY PLAN']).join('\n');
    }
  } finally {
    await client.query('DEALLOCATE searched');
    await client.query('RESET plan_cache_mode');
  }
  return found;
}

const ids = () => `'{${accounts.join(',')}}'`;
/** The page's parameters after a search's own: no bound, no other filter (the outcome neither), 51 rows. */
const PAGE_TYPES = 'timestamptz, uuid, timestamptz, text, uuid, text, text, jsonb, jsonb, text, int';
const PAGE_VALUES = `'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-infinity', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 51`;

it('the metadata search is a scan of the GIN index on metadata::jsonb, for the number and the string alike', async () => {
  const found = await plans(
    'oct_call_search_metadata',
    `uuid[], jsonb, jsonb, ${PAGE_TYPES}`,
    `${ids()}, '{"crm_id": 1200}', '{"crm_id": "1200"}', ${PAGE_VALUES}`,
  );
  for (const [mode, plan] of Object.entries(found)) {
    expect(plan, mode).toMatch(/Bitmap Index Scan on calls_metadata_jsonb_idx/);
    expect(plan, mode).not.toMatch(/Seq Scan/);
  }
  // And it finds what it says: the number 1200 and the string "1201" kinds both.
  const { text } = declaredStatements().find((s) => s.name === 'oct_call_search_metadata')!;
  const page = [
    'infinity',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '-infinity',
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    51,
  ];
  const asNumber = await client.query(text, [accounts, '{"crm_id":1200}', '{"crm_id":"1200"}', ...page]);
  const asString = await client.query(text, [accounts, '{"crm_id":1201}', '{"crm_id":"1201"}', ...page]);
  expect([asNumber.rows, asString.rows].map((rows) => rows.map((r: { matched: number }) => r.matched))).toEqual([
    [1],
    [1],
  ]);
});

it('the number prefix is a range of (account_id, phone_number text_pattern_ops)', async () => {
  const found = await plans(
    'oct_call_search_number',
    `uuid[], text, ${PAGE_TYPES}`,
    `${ids()}, '+141500012', ${PAGE_VALUES}`,
  );
  for (const [mode, plan] of Object.entries(found)) {
    expect(plan, mode).toMatch(
      /(Index (Only )?Scan using|Bitmap Index Scan on) calls_account_id_phone_number_prefix_idx/,
    );
    expect(plan, mode).not.toMatch(/Seq Scan/);
  }
});

it('the name prefix is a range of (account_id, lower(name) text_pattern_ops)', async () => {
  const found = await plans(
    'oct_call_search_name',
    `uuid[], text, ${PAGE_TYPES}`,
    `${ids()}, 'CALLER 1234', ${PAGE_VALUES}`,
  );
  // Or its agency's twin (migration 20261129100003): PostgreSQL 18 reads a B-tree by its second column (skip scan),
  // and here the two accounts are one agency's, so that is one range too.
  for (const [mode, plan] of Object.entries(found)) {
    expect(plan, mode).toMatch(
      /(Index Scan using|Bitmap Index Scan on) (calls_account_id_name_prefix_idx|calls_agency_id_name_newest_idx)/,
    );
    expect(plan, mode).not.toMatch(/Seq Scan/);
  }
});

it('a name search with no other filter reads every match from the name index alone (an index-only scan)', async () => {
  // Index-only scans skip the table for pages the visibility map marks all-visible: VACUUM sets it, as autovacuum
  // does on a default database.
  await vacuumAllVisible(client, 'calls');
  const found = await plans(
    'oct_call_search_name_newest',
    'uuid[], text, timestamptz, uuid, timestamptz, int',
    `${ids()}, 'CALLER 12', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-infinity', 51`,
  );
  for (const [mode, plan] of Object.entries(found)) {
    expect(plan, mode).toMatch(/Index Only Scan using calls_account_id_name_prefix_idx/);
    expect(plan, mode).not.toMatch(/Seq Scan/);
  }
  // And its page: the newest 51 of the 1,111 calls named "Caller 12…" (12, 120-129, 1200-1299, 12000-12999).
  const { text } = declaredStatements().find((s) => s.name === 'oct_call_search_name_newest')!;
  const { rows } = await client.query<{ name: string }>(text, [
    accounts,
    'caller 12',
    'infinity',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '-infinity',
    51,
  ]);
  expect(rows.map((r) => r.name)).toEqual([
    'Caller 12',
    ...Array.from({ length: 10 }, (_, i) => `Caller ${120 + i}`),
    ...Array.from({ length: 40 }, (_, i) => `Caller ${1200 + i}`),
  ]);
});
