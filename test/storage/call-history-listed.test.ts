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
import { createAgent } from '../../src/admin/agents.js';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import { historyAccounts, type CallHistoryFilters, type Storage } from '../../src/storage/index.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createClientTenant, createTenant, NO_CALL_FILTERS, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls, forceAccount } from '../helpers/seed.js';

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
  secondAgent = (
    await createAgent(storage, { accountId: client.accountId, name: 'Second', phone: '+14155550199', now: new Date() })
  ).id;
  // 40 calls a kind, on whole minutes so that many share a time and the id decides: the client's own, the agency's on
  // the client's agents (listed), the agency's on its own agent, the sibling's. Every third on the second agent. The
  // client's own calls on its second agent too (Own 10 to Own 19), so that the agent filter has both parts.
  const kinds = [
    { accountId: client.accountId, agentId: client.agentId, listed: null, prefix: '555', name: 'Own' },
    { accountId: agency.accountId, agentId: client.agentId, listed: client.accountId, prefix: '666', name: 'Listed' },
    { accountId: agency.accountId, agentId: agency.agentId, listed: null, prefix: '777', name: 'Agency' },
    { accountId: sibling.accountId, agentId: sibling.agentId, listed: null, prefix: '888', name: 'Sibling' },
  ];
  await bulkInsertCalls(
    db,
    kinds.flatMap((k) =>
      Array.from({ length: 40 }, (_, i) => {
        const g = i + 1;
        const second = (k.listed !== null && g % 3 === 0) || (k.name === 'Own' && g >= 10 && g <= 19);
        return {
          accountId: k.accountId,
          agentId: second ? secondAgent : k.agentId,
          listedForAccountId: k.listed,
          phoneNumber: `+1415${k.prefix}${String(g).padStart(4, '0')}`,
          name: `${k.name} ${g}`,
          // As json_build_object('crm', n) writes it.
          metadataJson: `{"crm" : ${g % 4}}`,
          status: g % 5 === 0 ? ('failed' as const) : ('completed' as const),
          createdAt: new Date(Date.parse('2054-11-01T00:00:00Z') - ((g * 7 + k.name.length) % 30) * 60_000),
        };
      }),
    ),
  );
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
