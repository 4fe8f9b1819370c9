// The Calls list of an agency's whole scope, given the agency (not its ids): it pages through exactly the calls a
// plain ORDER BY gives, reading one range of the (agency_id, created_at, id) index (calls.agency_id, set by a trigger
// whatever inserts the call), not one per client: an agency of hundreds of clients that placed calls costs a page.
// Only a filter that an account's index serves (an agent, a number prefix) reads the agency's accounts, and of them
// only those that had a call by the page's bound (accounts.first_call_at, kept by a trigger).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallHistoryFilters, CallListRow } from '../../src/storage/call-history.js';
import { declaredStatements } from '../../src/storage/statements.js';
import type { Storage } from '../../src/storage/storage.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertCallAt, insertClients } from '../helpers/seed.js';

const CLIENTS = 300;
/** The clients with calls: the first BUSY of them (the agency has calls too). */
const BUSY = 4;
const PAGE = 50;
let client: pg.Client;
let storage: Storage;
let agencyId: string;
let accounts: string[];
let busyAgent: string;
/** Each account's one agent. */
let agentOf: Map<string, string>;

beforeAll(async () => {
  const { url, prisma } = await freshPrisma();
  storage = storageOf(prisma);
  const agency = await createTenant(prisma);
  agencyId = agency.accountId;
  busyAgent = agency.agentId;
  client = new pg.Client({ connectionString: url });
  await client.connect();
  const clients = await insertClients(prisma, {
    agencyId,
    prefix: 'Client ',
    digits: 3,
    count: CLIENTS,
    agentName: 'Agent',
  });
  accounts = [agencyId, ...clients.map((c) => c.accountId)];
  agentOf = new Map([[agencyId, agency.agentId], ...clients.map((c) => [c.accountId, c.agentId!] as const)]);
  // The agency 300 calls, each busy client 60 (the last one's all after 2054-10-31 12:00), on whole minutes so that
  // many share a time and the id decides; every fifth failed. Another agency's calls, newer, must never show.
  const other = await createTenant(prisma);
  agentOf.set(other.accountId, other.agentId);
  const minute = (at: number) => new Date(Date.parse('2054-11-01T00:00:00Z') - at * 60_000);
  await bulkInsertCalls(
    client,
    [...accounts.slice(0, BUSY + 1), other.accountId].flatMap((accountId) => {
      // A spread of its own for each account (0 to 49 minutes), as the ids fall.
      const shift = parseInt(accountId.slice(0, 8), 16) % 50;
      return Array.from({ length: accountId === agencyId ? 300 : 60 }, (_, i) => {
        const g = i + 1;
        return {
          accountId,
          agentId: agentOf.get(accountId)!,
          phoneNumber: `+1415555${String(g).padStart(4, '0')}`,
          name: `Caller ${g}`,
          status: g % 5 === 0 ? ('failed' as const) : ('completed' as const),
          createdAt: accountId === accounts[BUSY] ? minute(g * 7) : minute((g * 7 + shift) % 3000),
        };
      });
    }),
  );
  await client.query('ANALYZE');
});

afterAll(() => client?.end());

async function expected(where = 'true', values: unknown[] = []): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM calls WHERE account_id = ANY($1::uuid[]) AND ${where} ORDER BY created_at DESC, id DESC`,
    [accounts, ...values],
  );
  return rows.map((r) => r.id);
}

async function everyPage(filters: CallHistoryFilters): Promise<CallListRow[]> {
  const seen: CallListRow[] = [];
  let before: { createdAt: Date; id: string } | undefined;
  for (let page = 0; page < 1000; page++) {
    const { calls, next } = await storage.history.listCallHistory({ agencyId, filters, before, limit: PAGE });
    seen.push(...calls);
    if (!next) return seen;
    before = next;
  }
  throw new Error('the pages never ended');
}

interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

/**
 * How many times a plan descended into calls' (account_id, created_at, id) index (`descents`) and into its
 * (agency_id, created_at, id) one (`agencyDescents`), and the buffers it touched.
 */
async function explained(
  name: string,
  values: unknown[],
): Promise<{ descents: number; agencyDescents: number; buffers: number }> {
  const { text } = declaredStatements().find((s) => s.name === name)!;
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL enable_sort = off');
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
      values,
    );
    const walk = (node: PlanNode, index: string): number =>
      (node['Index Name'] === index ? node['Actual Loops'] : 0) +
      (node.Plans ?? []).reduce((sum, child) => sum + walk(child, index), 0);
    const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    return {
      descents: walk(plan, 'calls_account_id_created_at_id_idx'),
      agencyDescents: walk(plan, 'calls_agency_id_created_at_id_idx'),
      buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'],
    };
  } finally {
    await client.query('ROLLBACK');
  }
}

describe("an agency's whole scope, given the agency", () => {
  it('pages through every call of the agency and its clients newest first, and no other agency’s', async () => {
    const ids = (await everyPage(NO_CALL_FILTERS)).map((c) => c.id);
    expect(ids.length).toBe(300 + 60 * BUSY);
    expect(ids).toEqual(await expected());
  });

  it('gives every call its agency whatever inserted it: the agency’s own, a client’s', async () => {
    const { rows } = await client.query<{ wrong: number; calls: number }>(
      `SELECT count(*) FILTER (WHERE c.agency_id IS DISTINCT FROM coalesce(a.agency_id, a.id))::int AS wrong,
              count(*)::int AS calls
         FROM calls c JOIN accounts a ON a.id = c.account_id`,
    );
    expect(rows[0]).toEqual({ wrong: 0, calls: 300 + 60 * BUSY + 60 });
    const own = await client.query<{ agencies: string[] }>(
      'SELECT array_agg(DISTINCT agency_id::text) AS agencies FROM calls WHERE account_id = ANY($1::uuid[])',
      [accounts],
    );
    expect(own.rows[0]!.agencies).toEqual([agencyId]);
  });

  it('applies the filters: status, agent, number and dates', async () => {
    expect((await everyPage({ ...NO_CALL_FILTERS, status: 'failed' })).map((c) => c.id)).toEqual(
      await expected(`status = 'failed'`),
    );
    expect((await everyPage({ ...NO_CALL_FILTERS, agentId: busyAgent })).map((c) => c.id)).toEqual(
      await expected('agent_id = $2::uuid', [busyAgent]),
    );
    // A number prefix reads the agency's accounts (its index is by account), with the same answer.
    const numbered = (await everyPage({ ...NO_CALL_FILTERS, numberPrefix: '+141555500' })).map((c) => c.id);
    expect(numbered.length).toBeGreaterThan(PAGE);
    expect(numbered).toEqual(await expected(`starts_with(phone_number, '+141555500')`));
    const named = (await everyPage({ ...NO_CALL_FILTERS, namePrefix: 'caller 1' })).map((c) => c.id);
    expect(named.length).toBeGreaterThan(PAGE);
    expect(named).toEqual(await expected(`lower(name) LIKE 'caller 1%'`));
    const from = new Date('2054-10-30T00:00:00Z');
    const to = new Date('2054-10-31T12:00:00Z');
    const ranged = (await everyPage({ ...NO_CALL_FILTERS, from, to })).map((c) => c.id);
    expect(ranged.length).toBeGreaterThan(PAGE);
    expect(ranged).toEqual(await expected('created_at >= $2 AND created_at < $3', [from, to]));
  });

  it('reads one range of the agency index, not a descent per client', async () => {
    const first = await explained('oct_call_history_by_agency', [
      [agencyId],
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      PAGE + 1,
    ]);
    expect(first).toMatchObject({ descents: 0, agencyDescents: 1 });
    const deep = await explained('oct_call_history_by_agency', [
      [agencyId],
      '2054-10-31T11:00:00Z',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      PAGE + 1,
    ]);
    expect(deep).toMatchObject({ descents: 0, agencyDescents: 1 });
    // The same page given the ids: a head from every one of the 301 accounts.
    const wide = await explained('oct_call_history_wide', [
      accounts,
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      PAGE + 1,
    ]);
    expect(wide.descents).toBeGreaterThan(CLIENTS);
    expect(first.buffers).toBeLessThan(wide.buffers / 5);
  });

  // The calls on the agency's indexes, in every combination.
  it('runs on indexes in every combination of filters, with its values and as the generic plan it keeps', async () => {
    const values: Record<string, string[]> = {
      status: [`'failed'`],
      agent_id: [`'${busyAgent}'`],
      number_prefix: [`'+1415555'`],
      name_prefix: [`'caller 1'`],
      meta: [`'{"crm_id": 1}'`, `'{"crm_id": "1"}'`],
      outcome: [`'booked'`],
    };
    const statements = declaredStatements().filter((s) => s.name.startsWith('oct_call_history_by_agency'));
    expect(statements).toHaveLength(64);
    const found: string[] = [];
    for (const { name, text } of statements) {
      const own = Object.keys(values)
        .filter((key) => name.includes(key))
        .flatMap((key) => values[key]!);
      await client.query(`PREPARE agency AS ${text}`);
      // As the list runs them (NEWEST_FIRST): here nearly every call is the agency's, and a plan free to sort would
      // rightly read the table rather than the index, as it would not for a scope of millions.
      await client.query('SET enable_sort = off');
      try {
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await client.query(`SET plan_cache_mode = ${mode}`);
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN EXECUTE agency(ARRAY['${agencyId}']::uuid[], 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-infinity',
                                    ${[...own, '51'].join(', ')})`,
          );
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          if (!/Index (Only )?Scan.*calls/.test(plan) || /Seq Scan on calls/.test(plan))
            found.push(`${mode} ${name}:\n${plan}`);
        }
      } finally {
        await client.query('DEALLOCATE agency');
        await client.query('RESET plan_cache_mode');
        await client.query('RESET enable_sort');
      }
    }
    expect(found.join('\n\n')).toBe('');
  });

  it('keeps first_call_at at each account’s oldest call as calls are added, older ones too', async () => {
    const quiet = accounts[CLIENTS]!;
    const firstOf = async () =>
      (await client.query<{ at: Date | null }>('SELECT first_call_at AS at FROM accounts WHERE id = $1', [quiet]))
        .rows[0]!.at;
    expect(await firstOf()).toBeNull();
    const insert = (at: string) =>
      insertCallAt(client, {
        accountId: quiet,
        agentId: agentOf.get(quiet)!,
        phoneNumber: '+14155550123',
        createdAt: new Date(at),
        expiresAt: new Date(at),
      });
    await insert('2054-11-02T10:00:00.123Z');
    expect(await firstOf()).toEqual(new Date('2054-11-02T10:00:00.123Z'));
    await insert('2054-11-03T10:00:00Z');
    expect(await firstOf()).toEqual(new Date('2054-11-02T10:00:00.123Z'));
    await insert('2054-11-01T09:00:00Z');
    expect(await firstOf()).toEqual(new Date('2054-11-01T09:00:00Z'));
    const page = await storage.history.listCallHistory({ agencyId, filters: NO_CALL_FILTERS, limit: 3 });
    expect(page.calls.map((c) => c.accountId)).toEqual([quiet, quiet, quiet]);
  });
});
