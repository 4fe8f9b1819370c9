// The Calls list's walk for a common search (its matches dense among the newest calls, as the probe found): it reads
// the account's calls newest first until a page matches, not every call of the account sorted, even where the
// average account is small, so that the planner expects few calls of any one; with its values and as the generic plan
// a prepared statement keeps. And the list answers such a search from that walk.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallHistoryFilters } from '../../src/storage/call-history.js';
import { createTenant, NO_CALL_FILTERS } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertAgencies } from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

const BIG = 20_000;
const capture = new PlanCapture();
let client: pg.Client;
/** The service's storage as it runs (custom plans, then generic ones), and one that plans generically at once. */
let storages: PlannedStorage[] = [];
let big: string;

beforeAll(async () => {
  // Every statement the storages' sessions run reports its plan, with the rows each node read (auto_explain).
  ({ client, storages } = await databaseReportingPlans(capture, { generic: true }));
  const tenant = await createTenant(storages[0]!.storage);
  big = tenant.accountId;
  // 300 small accounts of 20 calls and one of 20,000: the planner's average account has about 85 calls. In the big
  // one every tenth call is a Thomas (with a number of its own and a vip flag), newest ones included.
  const small = await insertAgencies(client, { prefix: 'Small ', count: 300, agentName: 'Agent' });
  await bulkInsertCalls(
    client,
    [tenant, ...small].flatMap(({ accountId, agentId }) =>
      Array.from({ length: accountId === big ? BIG : 20 }, (_, i) => {
        const g = i + 1;
        const thomas = g % 10 === 3;
        return {
          accountId,
          agentId: agentId!,
          phoneNumber: `${thomas ? '+1212' : '+1415'}${String(g).padStart(7, '0')}`,
          name: `${thomas ? 'Thomas' : 'Caller'} ${g}`,
          metadataJson: thomas ? '{"vip": true}' : '{"vip": false}',
          status: 'completed' as const,
          createdAt: new Date(Date.parse('2054-11-01T00:00:00Z') - g * 60_000),
        };
      }),
    ),
  );
  await client.query('ANALYZE');
});

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

/** The common searches of the big account: one call in ten matches each, the newest ones too. */
const SEARCHES: [string, Partial<CallHistoryFilters>][] = [
  ['name', { namePrefix: 'thomas' }],
  ['number', { numberPrefix: '+1212' }],
  ['metadata', { metadata: { key: 'vip', values: [true] } }],
];

describe('the walk of a common search', () => {
  it('reads the newest calls until a page matches (a few hundred of 20,000), however the statements are planned', async () => {
    capture.start();
    const read: Record<string, number> = {};
    for (const { plans, storage } of storages)
      for (const [search, filter] of SEARCHES) {
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const {
            result: { calls },
            plans: ran,
          } = await capture.plansDuring('walk', () =>
            storage.history.listCallHistory({
              accountIds: [big],
              filters: { ...NO_CALL_FILTERS, ...filter },
              limit: 50,
            }),
          );
          expect(calls).toHaveLength(50);
          expect(ran.length, `${plans} ${search}: plans reported`).toBeGreaterThan(0);
          read[`${plans}, ${search}, run ${i + 1}`] = Math.max(...ran.map((p) => rowsReadFrom(p, 'calls')));
          // A generic plan's conditions name the statement's parameters, a custom plan's their values.
          if (plans === 'generic plans') expect(JSON.stringify(ran), `${search}: a generic plan`).toMatch(/\$\d/);
        }
      }
    capture.stop();
    // A page of 51 at one call in ten is about 510 calls; every call of the account sorted would be 20,000.
    for (const [run, rows] of Object.entries(read)) expect(rows, run).toBeLessThan(1_000);
  });

  it('answers such a search with the newest matches, in order', async () => {
    const { calls, next } = await storages[0]!.storage.history.listCallHistory({
      accountIds: [big],
      filters: { ...NO_CALL_FILTERS, namePrefix: 'thomas' },
      limit: 50,
    });
    expect(calls.map((c) => c.name)).toEqual(Array.from({ length: 50 }, (_, i) => `Thomas ${3 + 10 * i}`));
    expect(next).not.toBeNull();
  });
});
