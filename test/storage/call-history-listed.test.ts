// The Calls list of a client with calls listed for it (an agency's key on its agents: calls.listed_for_account_id): its
// own calls and the listed ones are read on their own indexes and merged, and paging through them gives exactly the
// calls a plain ORDER BY does, every filter and search included; a sibling's and the agency's other calls never show.
// An agency's list of its own calls has them already (historyAccounts reads no listed part then). And the migration
// that clears default agents of another account: those rows lose their default (audited), the others keep theirs.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import { historyAccounts, type CallHistoryFilters, type Storage } from '../../src/storage/index.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS, type Tenant } from '../helpers/fixtures.js';
import { forceAccount } from '../helpers/seed.js';

let db: pg.Client;
let prisma: PrismaClient;
let storage: Storage;
let agency: Tenant;
let client: Tenant;
let sibling: Tenant;
let secondAgent: string;

beforeAll(async () => {
  const fresh = await freshPrisma();
  prisma = fresh.prisma;
  storage = storageOf(prisma);
  agency = await createTenant(prisma);
  client = await createClientTenant(prisma, agency.accountId);
  sibling = await createClientTenant(prisma, agency.accountId);
  db = new pg.Client({ connectionString: fresh.url });
  await db.connect();
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO agents (id, account_id, agency_id, name, phone_number, updated_at)
     VALUES (gen_random_uuid(), $1, $2, 'Second', '+14155550199', now()) RETURNING id`,
    [client.accountId, agency.accountId],
  );
  secondAgent = rows[0]!.id;
  // 40 calls a kind, on whole minutes so that many share a time and the id decides: the client's own, the agency's on
  // the client's agents (listed), the agency's on its own agent, the sibling's. Every third on the second agent.
  await db.query(
    `INSERT INTO calls (id, account_id, agent_id, listed_for_account_id, phone_number, from_number, name, metadata,
                        status, not_before, expires_at, created_at, updated_at)
     SELECT gen_random_uuid(), k.account, CASE WHEN k.listed IS NOT NULL AND g % 3 = 0 THEN $5::uuid ELSE k.agent END,
            k.listed, '+1415' || k.prefix || lpad(g::text, 4, '0'), '+14155550100', k.name || ' ' || g,
            json_build_object('crm', g % 4), CASE WHEN g % 5 = 0 THEN 'failed' ELSE 'completed' END::call_status,
            t, t + interval '1 day', t, t
       FROM (VALUES ($1::uuid, $2::uuid, NULL::uuid, '555', 'Own'),
                    ($3::uuid, $2::uuid, $1::uuid, '666', 'Listed'),
                    ($3::uuid, $4::uuid, NULL::uuid, '777', 'Agency'),
                    ($6::uuid, $7::uuid, NULL::uuid, '888', 'Sibling')) AS k(account, agent, listed, prefix, name)
      CROSS JOIN generate_series(1, 40) AS g
      CROSS JOIN LATERAL (SELECT timestamptz '2054-11-01 00:00Z' - ((g * 7 + length(k.name)) % 30) * interval '1 minute' AS t) AS t`,
    [
      client.accountId,
      client.agentId,
      agency.accountId,
      agency.agentId,
      secondAgent,
      sibling.accountId,
      sibling.agentId,
    ],
  );
  // The client's own calls on its second agent too, so that the agent filter has both parts.
  await db.query(`UPDATE calls SET agent_id = $2 WHERE account_id = $1 AND name LIKE '% 1_'`, [
    client.accountId,
    secondAgent,
  ]);
  await db.query('ANALYZE');
});

afterAll(() => db.end());

/** Every page of the client's list, 7 calls a page, in order. */
async function walk(
  filters: CallHistoryFilters,
  accounts = historyAccounts({ accountId: client.accountId, kind: 'client' }, [client.accountId]),
) {
  const seen: string[] = [];
  let before;
  for (let pages = 0; pages < 100; pages++) {
    const { calls, next } = await storage.history.listCallHistory({ ...accounts, filters, limit: 7, before });
    seen.push(...calls.map((c) => c.id));
    if (!next) return seen;
    before = next;
  }
  throw new Error('no end');
}

/** The same calls by a plain ORDER BY: the client's own and those listed for it, with `where`. */
async function expected(where = 'true', values: unknown[] = []) {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM calls c WHERE (c.account_id = $1 OR c.listed_for_account_id = $1) AND (${where})
      ORDER BY created_at DESC, id DESC`,
    [client.accountId, ...values],
  );
  return rows.map((r) => r.id);
}

describe("a client's Calls list with calls listed for it", () => {
  it('pages through its own and the listed calls, merged newest first, each once', async () => {
    const want = await expected();
    expect(want).toHaveLength(80);
    expect(await walk(NO_CALL_FILTERS)).toEqual(want);
  });

  it.each([
    ['status', { status: 'failed' }, `c.status = 'failed'`],
    ['agent', { agentId: 'second' }, 'c.agent_id = $2'],
    ['number prefix', { numberPrefix: '+1415666' }, `c.phone_number LIKE '+1415666%'`],
    ['name prefix', { namePrefix: 'listed 1' }, `lower(c.name) LIKE 'listed 1%'`],
    ['metadata', { metadata: { key: 'crm', values: [2] } }, `(c.metadata::jsonb ->> 'crm') = '2'`],
  ] as const)('with a filter: %s', async (_name, filter, where) => {
    const filters = { ...NO_CALL_FILTERS, ...filter } as CallHistoryFilters;
    if (filters.agentId === 'second') filters.agentId = secondAgent;
    const want = await expected(where, where.includes('$2') ? [secondAgent] : []);
    expect(want.length).toBeGreaterThan(0);
    expect(await walk(filters)).toEqual(want);
  });

  it('finds a listed call by its id, not a sibling of the client', async () => {
    const [id] = await expected(`c.listed_for_account_id IS NOT NULL`);
    const mine = historyAccounts({ accountId: client.accountId, kind: 'client' }, [client.accountId]);
    const theirs = historyAccounts({ accountId: sibling.accountId, kind: 'client' }, [sibling.accountId]);
    const find = (accounts: typeof mine) =>
      storage.history.findCallInHistory({ ...accounts, callId: id!, filters: NO_CALL_FILTERS });
    expect((await find(mine)).map((c) => c.id)).toEqual([id]);
    expect(await find(theirs)).toEqual([]);
    expect(await walk(NO_CALL_FILTERS, theirs)).not.toContain(id);
  });

  it("an agency's list of its own accounts has the listed calls once, without reading them twice", async () => {
    const scope = { accountId: agency.accountId, kind: 'agency' } as const;
    expect(historyAccounts(scope, [agency.accountId, client.accountId])).toEqual({
      accountIds: [agency.accountId, client.accountId],
      listedFor: [],
    });
    expect(historyAccounts(scope, [client.accountId])).toEqual({
      accountIds: [client.accountId],
      listedFor: [client.accountId],
    });
    const all = await walk(NO_CALL_FILTERS, historyAccounts(scope, null));
    expect(all).toHaveLength(160);
    expect(new Set(all).size).toBe(160);
  });
});

describe('migration 20261201160005: default agents of another account are cleared', () => {
  it("clears an agency's default that is a client's agent, audited, and keeps the others", async () => {
    await forceAccount(prisma, agency.accountId, { defaultAgentId: client.agentId });
    const sql = fs.readFileSync(
      path.join(MIGRATIONS_DIR, '20261201160005_default_agents_own', 'migration.sql'),
      'utf8',
    );
    await db.query(sql);
    const defaults = await prisma.account.findMany({
      where: { id: { in: [agency.accountId, client.accountId, sibling.accountId] } },
      select: { id: true, defaultAgentId: true },
    });
    expect(Object.fromEntries(defaults.map((a) => [a.id, a.defaultAgentId]))).toEqual({
      [agency.accountId]: null,
      [client.accountId]: client.agentId,
      [sibling.accountId]: sibling.agentId,
    });
    const entries = await prisma.auditEntry.findMany({
      where: { accountId: agency.accountId, action: 'default_agent_changed', actorKind: 'service' },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.detail).toMatchObject({ agent_id: null, previous_agent_id: client.agentId });
  });
});
