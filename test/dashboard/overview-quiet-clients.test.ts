// The Overview of an agency of a thousand clients: it shows the same page as it would by reading every client in full
// (the clients with the most to see first, then the others by name, and how many are not shown), but it chooses them
// in one statement from a few entries of each (the account row, active calls, the day's counters, the endpoint's
// recent failures), ranking only the clients with something to see, and reads only the clients it shows in full: no
// statement carries the agency's thousand ids, whether they never had a call or all had. Never another agency's
// client.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { OVERVIEW_CLIENTS_MAX } from '../../src/routes/dashboard/overview.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant, agentOf } from '../helpers/fixtures.js';
import { clientReportingPlans, PlanCapture, rowsReadFrom } from '../helpers/plan-capture.js';
import { createUserWithPassword, DASHBOARD_ENV, pageWithPlans, Visitor } from './helpers.js';
import {
  bulkInsertCalls,
  insertAgencies,
  insertCalls,
  insertClients,
  insertEndpointRow,
  insertLiveCalls,
} from '../helpers/seed.js';
import { createClient } from '../../src/admin/accounts.js';

/** The agency's clients that never had a call. */
const QUIET = 1_000;
/** Accounts of other agencies, so that the agency is a small part of accounts, as it would be. */
const OTHERS = 3_000;

const clock = { now: new Date('2058-03-11T12:00:00.000Z') };
const capture = new PlanCapture();
let app: App;
let db: pg.Client;
let agency: Tenant;
let visitor: Visitor;

/** The quiet clients, in the order of their numbers ("Quiet 0001" first). */
const quiet: string[] = [];

/** `count` clients of `agencyId` named `prefix` and a number (zero-padded from `from`), kept in `quiet`. */
const clients = async (agencyId: string, prefix: string, count: number, from = 1) => {
  const made = await insertClients(prismaOf(app), { agencyId, prefix, digits: 4, count, from });
  quiet.push(...made.map((c) => c.accountId));
};

/** A client named `name`, as an operator makes one. */
const client = async (agencyId: string, name: string) =>
  (await createClient(app.storage, { agencyId, name, now: app.now() })).id;

/** The client's endpoint, on or switched off by hand. */
const endpoint = (accountId: string, enabled: boolean) =>
  insertEndpointRow(prismaOf(app), {
    data: {
      accountId,
      url: 'https://hooks.example.test/in',
      secret: 'whsec_test',
      enabled,
      disabledReason: enabled ? null : 'manual',
    },
  });

/** Calls of `accountId` created now (the clock's) in `status`: under way or waiting, as acceptance leaves them. */
const live = async (accountId: string, statuses: ('dialing' | 'initiated')[]) =>
  insertLiveCalls(prismaOf(app), {
    accountId,
    agentId: await agentOf(prismaOf(app), accountId),
    statuses,
    at: clock.now,
  });

async function ended(accountId: string, count: number, status: 'completed' | 'failed'): Promise<void> {
  const agentId = await agentOf(prismaOf(app), accountId);
  await insertCalls(prismaOf(app), {
    accountId,
    agentId,
    count,
    status,
    createdAt: new Date(clock.now.getTime() - 600_000),
  });
}

/** The account names of the page's Calls table, in order. */
const accountsOf = (body: string) =>
  [
    ...(/<table class="rows overview" id="calls-now">[^]*?<\/table>/.exec(body)?.[0] ?? '').matchAll(
      /<th scope="row" data-label="Account">([^<]+)</g,
    ),
  ].map((m) => m[1]!.trim());

/** The Overview as the agency's user gets it, with the statements it sent and the plans they ran. */
const overview = () => pageWithPlans(capture, visitor, '/dashboard');

/** The most values a statement was sent with, each element of an array one value. */
const mostValues = (statements: { values: unknown[] }[]) =>
  Math.max(...statements.map((s) => s.values.reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : 1), 0)));

beforeAll(async () => {
  let url: string;
  ({ client: db, url } = await clientReportingPlans(capture));
  ({ app } = await buildTestApp({ databaseUrl: url, env: DASHBOARD_ENV, clock: () => clock.now }));
  agency = await createTenant(app.storage);
  await clients(agency.accountId, 'Quiet ', QUIET);
  // Named to come after every quiet client: only what they have to show can put them on the page.
  const [busyA, busyB, busyC, disabled] = await Promise.all(
    ['Zulu Busy A', 'Zulu Busy B', 'Zulu Busy C', 'Zulu Disabled'].map((n) => client(agency.accountId, n)),
  );
  await live(busyA!, ['dialing', 'initiated']);
  await ended(busyB!, 2, 'failed');
  await ended(busyC!, 3, 'completed');
  await endpoint(disabled!, false);
  // A quiet client among the first by name has an endpoint: its row shows it.
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM accounts WHERE name = 'Quiet 0002'`);
  await endpoint(rows[0]!.id, true);
  // Other agencies, one with a client busier than any of the agency's.
  const other = await createTenant(app.storage);
  const otherBusy = await client(other.accountId, 'Zulu Other');
  await live(otherBusy, ['dialing', 'dialing', 'initiated']);
  await ended(otherBusy, 5, 'failed');
  await endpoint(otherBusy, false);
  await insertAgencies(prismaOf(app), {
    prefix: 'Other Agency ',
    count: OTHERS / 10,
    clientsEach: 9,
    clientPrefix: 'Other Client ',
  });
  // What autovacuum would have done by then.
  await db.query('VACUUM ANALYZE');
  await createUserWithPassword(app.storage, agency.accountId, 'agency@quiet.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('agency@quiet.example')).status).toBe(303);
}, 120_000);

afterAll(async () => {
  capture.stop();
  await db?.end();
});

describe('the Overview of an agency of a thousand quiet clients', () => {
  it('lists the clients with the most to see first, then the first by name, and counts the others', async () => {
    const { body } = await overview();
    const shown = accountsOf(body);
    expect(shown).toHaveLength(1 + OVERVIEW_CLIENTS_MAX);
    // Its own; the disabled endpoint (trouble), calls under way, failed today, completed today; then by name.
    expect(shown.slice(0, 5)).toEqual(['Test Agency', 'Zulu Disabled', 'Zulu Busy A', 'Zulu Busy B', 'Zulu Busy C']);
    const byName = Array.from(
      { length: OVERVIEW_CLIENTS_MAX - 4 },
      (_, i) => `Quiet ${String(i + 1).padStart(4, '0')}`,
    );
    expect(shown.slice(5)).toEqual(byName);
    expect(body).not.toContain('Zulu Other');
    expect(body).toContain('The webhook endpoint of Zulu Disabled is disabled');
    expect(body).toContain(`${QUIET + 4 - OVERVIEW_CLIENTS_MAX} more are not shown: see`);
    // The quiet client's endpoint, enabled; the others with none.
    const endpoints = /<table class="rows overview" id="endpoints">[^]*?<\/table>/.exec(body)![0];
    expect(endpoints).toMatch(/Quiet 0002<\/th>\s*<td data-label="Endpoint"><code>https:\/\/hooks\.example\.test\/in</);
    expect(endpoints).toMatch(/Quiet 0001<\/th>\s*<td data-label="Endpoint" colspan="4">No webhook endpoint set/);
  });

  it("sends no statement the agency's thousand ids, and reads each quiet client's row once, to count it", async () => {
    const before = await overview();
    // The listing of every client (1,001 ids) went to each of four reads.
    expect(mostValues(before.statements)).toBeLessThanOrEqual(2 * OVERVIEW_CLIENTS_MAX);
    const accountsRead = rowsReadFrom(before.plans, 'accounts');
    // A thousand more quiet clients: the count reads them, nothing else.
    await clients(agency.accountId, 'Quiet ', QUIET, QUIET + 1);
    await db.query('VACUUM ANALYZE accounts');
    const after = await overview();
    expect(after.body).toContain(`${2 * QUIET + 4 - OVERVIEW_CLIENTS_MAX} more are not shown: see`);
    expect(mostValues(after.statements)).toBeLessThanOrEqual(2 * OVERVIEW_CLIENTS_MAX);
    // One read of each client's row, to count it and see its waiting calls (before the eighteenth session the
    // listing, the live counts and the first-run checks each read every client: 3,000 more rows for the 1,000 clients).
    expect(rowsReadFrom(after.plans, 'accounts') - accountsRead).toBeLessThanOrEqual(QUIET + 50);
    expect(accountsRead).toBeLessThanOrEqual(QUIET + 300);
  });

  it('ranks a thousand clients that all had calls from a few entries each, and reads only those it shows', async () => {
    // Every other quiet client completed a call today: each now has something to show, so only the ranking, not
    // their names, decides which of them are listed.
    const at = new Date(clock.now.getTime() - 3_600_000);
    await bulkInsertCalls(
      db,
      quiet
        .filter((_, i) => (i + 1) % 2 === 0)
        .map((accountId) => ({
          accountId,
          agentId: agency.agentId,
          status: 'completed' as const,
          createdAt: at,
          expiresAt: at,
          startedAt: at,
          answeredAt: at,
          endedAt: new Date(at.getTime() + 60_000),
          durationSeconds: 60,
        })),
    );
    await db.query('VACUUM ANALYZE');
    const { body, statements, plans } = await overview();
    const shown = accountsOf(body);
    expect(shown.slice(0, 5)).toEqual(['Test Agency', 'Zulu Disabled', 'Zulu Busy A', 'Zulu Busy B', 'Zulu Busy C']);
    expect(shown.slice(5)).toEqual(
      Array.from({ length: OVERVIEW_CLIENTS_MAX - 4 }, (_, i) => `Quiet ${String(2 * (i + 1)).padStart(4, '0')}`),
    );
    expect(body).toContain(`${2 * QUIET + 4 - OVERVIEW_CLIENTS_MAX} more are not shown: see`);
    // The shown accounts' counts are read in full (their 51 ids, and the time or the five bounds of the counters of
    // the viewer's today); the thousand others' never leave the database.
    expect(mostValues(statements)).toBeLessThanOrEqual(1 + OVERVIEW_CLIENTS_MAX + 5);
    // Their calls are not read: the day's outcomes are counters, and only active calls are counted.
    expect(rowsReadFrom(plans, 'calls')).toBeLessThan(50);
  });
});
