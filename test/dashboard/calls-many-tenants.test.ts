// The Calls list of an agency of a thousand clients (each with an agent), among thousands of other tenants: its first
// page and its name search read the first rows of its menus (the accounts and agents by name, up to one more than a
// menu shows) and the accounts that ever had a call, not every client, agent or tenant: the rows they read do not
// grow with quiet clients or with other tenants, also once PostgreSQL plans the prepared statements for all values
// (a large agency among many small ones: a generic plan reads the agency's thousand agents to find a page's few).
// The page is the one it was: the busy clients' calls with their names, never another agency's.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { FILTER_MENU_MAX } from '../../src/views/pages/calls-filters.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { clientReportingPlans, PlanCapture, rowsReadFrom } from '../helpers/plan-capture.js';
import { createUserWithPassword, DASHBOARD_ENV, pageWithPlans, Visitor } from './helpers.js';
import { insertAgencies, insertCalls, insertClients, nameCalls } from '../helpers/seed.js';

/** The agency's clients that never had a call, each with an agent: more than a menu lists. */
const QUIET = 1_000;
/** The agency's clients with calls, each with its own agent. */
const BUSY = 6;
/** Other agencies, of 9 clients each, every account with an agent; and ten times as many on their own. */
const OTHER_AGENCIES = 300;

const capture = new PlanCapture();
let app: App;
let db: pg.Client;
let agency: Tenant;
let visitor: Visitor;
let busyCalls: string[];
let adaCalls: string[];
let otherCalls: string[];

/** `count` more quiet clients of the agency, each with an agent, numbered from `from`. */
const quietClients = (count: number, from: number) =>
  insertClients(prismaOf(app), {
    agencyId: agency.accountId,
    prefix: 'Quiet ',
    digits: 5,
    count,
    from,
    agentName: 'Quiet agent',
  });

/** `count` more agencies of 9 clients, every account with an agent. */
const otherTenants = (count: number) =>
  insertAgencies(prismaOf(app), {
    prefix: 'Other Agency ',
    count,
    clientsEach: 9,
    clientPrefix: 'Other Client ',
    agentName: 'Other agent',
  });

/** `count` more agencies on their own (no clients), each with an agent: most agencies are small. */
const loneAgencies = (count: number) =>
  insertAgencies(prismaOf(app), { prefix: 'Lone Agency ', count, agentName: 'Lone agent' });

/** `count` calls of `tenant`, a minute old, named `name`. */
async function namedCalls(tenant: Tenant, count: number, name: string): Promise<string[]> {
  const ids = await insertCalls(prismaOf(app), {
    accountId: tenant.accountId,
    agentId: tenant.agentId,
    count,
    createdAt: new Date(Date.now() - 60_000),
  });
  await nameCalls(prismaOf(app), ids, name);
  return ids;
}

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!).sort();

/**
 * A page as the agency's user gets it, and the rows its statements read from accounts and agents: after as many
 * reads as it takes PostgreSQL to plan a prepared statement once for all values (its generic plan, after five), as
 * a page read all day is.
 */
async function read(path: string) {
  for (let i = 0; i < 6; i++) await visitor.get(path);
  const { body, plans } = await pageWithPlans(capture, visitor, path);
  return { body, accounts: rowsReadFrom(plans, 'accounts'), agents: rowsReadFrom(plans, 'agents') };
}

const PAGES = { first: '/dashboard/calls', nameSearch: '/dashboard/calls?name=ada' };

beforeAll(async () => {
  let url: string;
  ({ client: db, url } = await clientReportingPlans(capture));
  ({ app } = await buildTestApp({ databaseUrl: url, env: DASHBOARD_ENV }));
  agency = await createTenant(app.storage);
  await quietClients(QUIET, 1);
  // Busy clients, each with its agent: a page of their calls names several agents, as a page would.
  busyCalls = [];
  adaCalls = [];
  for (let i = 1; i <= BUSY; i++) {
    const busy = await createClientTenant(app.storage, agency.accountId, { name: `Zulu Busy ${i}` });
    const ada = await namedCalls(busy, 1, 'Ada Lovelace');
    adaCalls.push(...ada);
    busyCalls.push(...ada, ...(await namedCalls(busy, 1, 'Grace Hopper')));
  }
  const other = await createTenant(app.storage);
  const otherClient = await createClientTenant(app.storage, other.accountId);
  otherCalls = await namedCalls(otherClient, 2, 'Ada Byron');
  await otherTenants(OTHER_AGENCIES);
  await loneAgencies(10 * OTHER_AGENCIES);
  // What autovacuum would have done by then.
  await db.query('VACUUM ANALYZE');
  await createUserWithPassword(app.storage, agency.accountId, 'agency@tenants.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('agency@tenants.example')).status).toBe(303);
}, 120_000);

afterAll(async () => {
  capture.stop();
  await db?.end();
});

describe('the Calls list of an agency of a thousand clients among thousands of tenants', () => {
  it('shows the busy clients’ calls with their names, and finds them by name, never another agency’s', async () => {
    const first = await read(PAGES.first);
    expect(listed(first.body)).toEqual([...busyCalls].sort());
    for (let i = 1; i <= BUSY; i++) expect(first.body).toContain(`Zulu Busy ${i}`);
    // Too many to list: the filters are names to type.
    expect(first.body).not.toContain('Quiet 00001');
    const search = await read(PAGES.nameSearch);
    expect(listed(search.body)).toEqual([...adaCalls].sort());
    for (const id of otherCalls) expect(search.body).not.toContain(id);
  });

  it('reads a menu’s worth of accounts and agents, not every client, agent or tenant', async () => {
    const before = { first: await read(PAGES.first), nameSearch: await read(PAGES.nameSearch) };
    for (const page of Object.values(before)) {
      // The menus' first rows (one more than a menu lists) and each agent's owner; the page's own rows.
      expect(page.accounts).toBeLessThanOrEqual(2 * (FILTER_MENU_MAX + 1) + 20);
      expect(page.agents).toBeLessThanOrEqual(FILTER_MENU_MAX + 1 + 20);
    }
    // A thousand more quiet clients and five times the other tenants: nothing more is read.
    await quietClients(QUIET, QUIET + 1);
    await otherTenants(10 * OTHER_AGENCIES);
    await loneAgencies(10 * OTHER_AGENCIES);
    await db.query('VACUUM ANALYZE accounts');
    await db.query('VACUUM ANALYZE agents');
    const after = { first: await read(PAGES.first), nameSearch: await read(PAGES.nameSearch) };
    for (const key of Object.keys(PAGES) as (keyof typeof PAGES)[]) {
      expect(listed(after[key].body)).toEqual(listed(before[key].body));
      expect(after[key].accounts - before[key].accounts).toBeLessThanOrEqual(5);
      expect(after[key].agents - before[key].agents).toBeLessThanOrEqual(5);
    }
  }, 60_000);
});
