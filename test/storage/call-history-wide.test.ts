// The Calls list of a scope with more accounts than a page has rows (an agency's clients): it pages through exactly
// the calls a plain ORDER BY gives, filters and ties on created_at included, while reading a bounded number of calls
// (each account's newest first), not a page from every account; on indexes only, as a prepared statement runs it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallHistoryFilters, CallListRow } from '../../src/storage/call-history.js';
import { declaredStatements } from '../../src/storage/statements.js';
import type { Storage } from '../../src/storage/storage.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertClients } from '../helpers/seed.js';

const CLIENTS = 79;
const PAGE = 50;
let client: pg.Client;
let storage: Storage;
let accounts: string[];
let busyAgent: string;

beforeAll(async () => {
  const { url, prisma } = await freshPrisma();
  storage = storageOf(prisma);
  const agency = await createTenant(prisma);
  client = new pg.Client({ connectionString: url });
  await client.connect();
  const clients = await insertClients(prisma, {
    agencyId: agency.accountId,
    prefix: 'Client ',
    count: CLIENTS,
    agentName: 'Agent',
  });
  accounts = [agency.accountId, ...clients.map((c) => c.accountId)];
  busyAgent = agency.agentId;
  // Every account has 60 calls, the agency 600; times on whole minutes, so that many calls share one (within an
  // account and across accounts) and the id decides their order. Every fifth call failed.
  const owners = [{ accountId: agency.accountId, agentId: agency.agentId }, ...clients];
  await bulkInsertCalls(
    client,
    owners.flatMap(({ accountId, agentId }) => {
      // A spread of its own for each account (0 to 49 minutes), as the ids fall.
      const shift = parseInt(accountId.slice(0, 8), 16) % 50;
      return Array.from({ length: accountId === agency.accountId ? 600 : 60 }, (_, i) => {
        const g = i + 1;
        return {
          accountId,
          agentId: agentId!,
          phoneNumber: `+1415555${String(g).padStart(4, '0')}`,
          name: `Caller ${g}`,
          status: g % 5 === 0 ? ('failed' as const) : ('completed' as const),
          createdAt: new Date(Date.parse('2054-11-01T00:00:00Z') - ((g * 7 + shift) % 3000) * 60_000),
        };
      });
    }),
  );
  await client.query('ANALYZE');
});

afterAll(() => client?.end());

/** Every call of the scope that passes `where`, newest first (ties by id): what the pages must add up to. */
async function expected(where = 'true', values: unknown[] = []): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM calls WHERE account_id = ANY($1::uuid[]) AND ${where} ORDER BY created_at DESC, id DESC`,
    [accounts, ...values],
  );
  return rows.map((r) => r.id);
}

/** The list's pages one after another, following each page's cursor to the end. */
async function everyPage(filters: CallHistoryFilters): Promise<CallListRow[]> {
  const seen: CallListRow[] = [];
  let before: { createdAt: Date; id: string } | undefined;
  for (let page = 0; page < 1000; page++) {
    const { calls, next } = await storage.history.listCallHistory({
      accountIds: accounts,
      filters,
      before,
      limit: PAGE,
    });
    seen.push(...calls);
    if (!next) return seen;
    before = next;
  }
  throw new Error('the pages never ended');
}

describe('an agency with more clients than a page has rows', () => {
  it('pages through every call newest first, ties on the time in id order, with no call twice or missing', async () => {
    const ids = (await everyPage(NO_CALL_FILTERS)).map((c) => c.id);
    expect(ids.length).toBe(600 + 60 * CLIENTS);
    expect(ids).toEqual(await expected());
  });

  it('applies the filters: status, agent and dates', async () => {
    expect((await everyPage({ ...NO_CALL_FILTERS, status: 'failed' })).map((c) => c.id)).toEqual(
      await expected(`status = 'failed'`),
    );
    expect((await everyPage({ ...NO_CALL_FILTERS, agentId: busyAgent })).map((c) => c.id)).toEqual(
      await expected('agent_id = $2::uuid', [busyAgent]),
    );
    const from = new Date('2054-10-31T00:00:00Z');
    const to = new Date('2054-10-31T12:00:00Z');
    const ranged = (await everyPage({ ...NO_CALL_FILTERS, from, to })).map((c) => c.id);
    expect(ranged.length).toBeGreaterThan(PAGE);
    expect(ranged).toEqual(await expected('created_at >= $2 AND created_at < $3', [from, to]));
  });

  it('reads each account’s newest call and a page’s worth, not a page from every account', async () => {
    const read = async (name: string) => {
      const { text } = declaredStatements().find((s) => s.name === name)!;
      const values = [accounts, 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-infinity', PAGE + 1];
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      return rowsReadFromCalls(rows[0]!['QUERY PLAN']);
    };
    const narrow = await read('oct_call_history');
    const wide = await read('oct_call_history_wide');
    // A page from each of the 80 accounts: 50 calls + 1 of each.
    expect(narrow).toBeGreaterThanOrEqual((PAGE + 1) * (CLIENTS + 1));
    expect(wide).toBeLessThan(narrow / 5);
  });

  it('runs on indexes in every combination of filters, with its values and as the generic plan it keeps', async () => {
    // Each filter's values, in the order the statements take them (after the accounts, the bound and the lower time).
    const values: Record<string, string[]> = {
      status: [`'failed'`],
      agent_id: [`'${busyAgent}'`],
      number_prefix: [`'+1415555'`],
      name_prefix: [`'caller 1'`],
      meta: [`'{"crm_id": 1}'`, `'{"crm_id": "1"}'`],
      outcome: [`'booked'`],
    };
    const wide = declaredStatements().filter((s) => s.name.startsWith('oct_call_history_wide'));
    expect(wide).toHaveLength(64);
    const found: string[] = [];
    for (const { name, text } of wide) {
      const filters = Object.keys(values).filter((key) => name.includes(key));
      const own = filters.flatMap((key) => values[key]!);
      await client.query(`PREPARE wide AS ${text}`);
      try {
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await client.query(`SET plan_cache_mode = ${mode}`);
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN EXECUTE wide('{${accounts.join(',')}}', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
                                  '-infinity', ${[...own, '51'].join(', ')})`,
          );
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          if (!/Index (Only )?Scan/.test(plan) || /Seq Scan on calls/.test(plan))
            found.push(`${mode} ${name}:\n${plan}`);
        }
      } finally {
        await client.query('DEALLOCATE wide');
        await client.query('RESET plan_cache_mode');
      }
    }
    expect(found.join('\n\n')).toBe('');
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** The rows every scan of `calls` in an EXPLAIN ANALYZE returned, over all its loops. */
function rowsReadFromCalls(explained: unknown): number {
  const walk = (node: PlanNode): number =>
    (node['Relation Name'] === 'calls' ? node['Actual Rows'] * node['Actual Loops'] : 0) +
    (node.Plans ?? []).reduce((sum, child) => sum + walk(child), 0);
  return walk((explained as { Plan: PlanNode }[])[0]!.Plan);
}
