// The Overview's "today" in the viewer's own time zone (issue 47): the day's outcomes of each account and the clients'
// ranking count the calls that ended from the viewer's local midnight to now (the quarter-hour counters the triggers
// on calls keep, 20261202110000), whether the zone is hours behind UTC (America/Los_Angeles), half an hour off the
// hour (Asia/Kolkata, +05:30), UTC (no zone chosen) or switched to UTC in the header.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { OVERVIEW_CLIENTS_MAX } from '../../src/routes/dashboard/overview.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls, insertClients } from '../helpers/seed.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

/** 07:30 UTC: 23:30 the day before in Los Angeles (PST, -08:00), 13:00 in Kolkata (+05:30). */
const NOW = new Date('2056-03-02T07:30:00Z');
/** When each batch of the agency's own calls ended, and how many (a power of two each: every sum says which). */
const ENDED = {
  beforeEveryMidnight: ['2056-03-01T07:50:00Z', 1], // 23:50 PST on the 29th of February
  afterLosAngeles: ['2056-03-01T08:10:00Z', 2], // 00:10 PST
  beforeKolkata: ['2056-03-01T18:20:00Z', 4], // 23:50 IST
  afterKolkata: ['2056-03-01T18:40:00Z', 8], // 00:10 IST on the 2nd
  afterUtc: ['2056-03-02T00:05:00Z', 16],
} as const;

let app: App;
let agency: Tenant;
let n = 0;

/** A signed-in user of the agency, in `zone` (none: UTC). */
async function userIn(zone: string | null): Promise<Visitor> {
  const email = `local-day-${n++}@example.com`;
  await createUserWithPassword(app.storage, agency.accountId, email);
  const visitor = new Visitor(app);
  visitor.ip = `10.9.0.${n}`;
  expect((await visitor.signIn(email)).status).toBe(303);
  if (zone)
    expect(
      (await visitor.submit('/dashboard/account', '/dashboard/account/time-zone', { timezone: zone })).status,
    ).toBe(303);
  return visitor;
}

/** The Overview's row of `account`: its completed and failed calls of today, as shown. */
function countsOf(body: string, account: string): { completed: number; failed: number } | null {
  const table = /<table class="rows overview" id="calls-now">[^]*?<\/table>/.exec(body)![0];
  const row = [...table.matchAll(/<tr>([^]*?)<\/tr>/g)].find((r) => r[1]!.includes(`>${account}`))?.[1];
  if (!row) return null;
  const cell = (label: string) => Number(new RegExp(`data-label="${label}"><a href="[^"]*">(\\d+)</a>`).exec(row)![1]);
  return { completed: cell('Completed today'), failed: cell('Failed today') };
}

/** The accounts the Overview lists, in its order. */
function accountsOf(body: string): string[] {
  const table = /<table class="rows overview" id="calls-now">[^]*?<\/table>/.exec(body)![0];
  return [...table.matchAll(/<th scope="row" data-label="Account">([^<]+?)(?: <small>|<\/th>)/g)].map((m) => m[1]!);
}

/** `count` calls of `account` that ended at `at` (created a minute before), completed or failed busy. */
const endedAt = (account: { accountId: string; agentId: string | null }, at: string, count: number, busy = false) =>
  Array.from({ length: count }, () => ({
    accountId: account.accountId,
    agentId: account.agentId!,
    status: busy ? ('failed' as const) : ('completed' as const),
    failureReason: busy ? 'busy' : null,
    createdAt: new Date(Date.parse(at) - 60_000),
    endedAt: new Date(at),
  }));

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => NOW }));
  agency = await createTenant(app.storage, { name: 'Agency' });
  const prisma = prismaOf(app);
  // The agency's own calls, and one that failed (busy) after Kolkata's midnight.
  const own = [
    ...Object.values(ENDED).flatMap(([at, count]) => endedAt(agency, at, count)),
    ...endedAt(agency, ENDED.afterKolkata[0], 1, true),
  ];
  // More clients than the Overview lists, most of them with nothing to see: which two of the others are listed
  // depends on what "today" holds. Evening ended calls on the 1st, 09:00 UTC (Los Angeles' today alone); Morning on
  // the 2nd, 01:00 UTC (every zone's today). Both sort after the quiet clients by name.
  await insertClients(prisma, {
    agencyId: agency.accountId,
    prefix: 'Quiet ',
    digits: 3,
    count: OVERVIEW_CLIENTS_MAX + 2,
    agentName: 'Agent',
  });
  const [evening, morning] = await insertClients(prisma, {
    agencyId: agency.accountId,
    prefix: 'Zulu ',
    count: 2,
    agentName: 'Agent',
  });
  await bulkInsertCalls(prisma, [
    ...own,
    ...endedAt(evening!, '2056-03-01T09:00:00Z', 3),
    ...endedAt(morning!, '2056-03-02T01:00:00Z', 1),
  ]);
});

describe('the Overview\'s "today" in the viewer\'s zone', () => {
  it('counts, in Los Angeles at 23:30, the calls that ended since its midnight (08:00 UTC) only', async () => {
    const visitor = await userIn('America/Los_Angeles');
    const { body } = await visitor.get('/dashboard');
    expect(body).toContain(
      '"Today" is 2056-03-01 in America/Los_Angeles: calls that ended since 2056-03-01 00:00:00 PST.',
    );
    expect(countsOf(body, 'Agency')).toEqual({ completed: 2 + 4 + 8 + 16, failed: 1 });
    // The links name that day, which the Calls list reads in the same zone.
    expect(body).toContain('/dashboard/calls?status=completed&amp;from=2056-03-01&amp;to=2056-03-01');
  });

  it('counts, in Kolkata (+05:30), the calls that ended since its midnight (18:30 UTC the day before)', async () => {
    const visitor = await userIn('Asia/Kolkata');
    const { body } = await visitor.get('/dashboard');
    expect(body).toContain('"Today" is 2056-03-02 in Asia/Kolkata: calls that ended since 2056-03-02 00:00:00 ');
    expect(countsOf(body, 'Agency')).toEqual({ completed: 8 + 16, failed: 1 });
  });

  it('counts from 00:00 UTC for a user without a zone, and for one who switched to UTC', async () => {
    const utc = await userIn(null);
    const { body } = await utc.get('/dashboard');
    expect(body).toContain('"Today" is 2056-03-02 in UTC: calls that ended since 2056-03-02 00:00:00 UTC.');
    expect(countsOf(body, 'Agency')).toEqual({ completed: 16, failed: 0 });
    const switched = await userIn('America/Los_Angeles');
    expect(countsOf((await switched.get('/dashboard')).body, 'Agency')).toEqual({ completed: 30, failed: 1 });
    expect((await switched.submit('/dashboard', '/dashboard/account/times')).status).toBe(303);
    const inUtc = (await switched.get('/dashboard')).body;
    expect(inUtc).toContain('"Today" is 2056-03-02 in UTC');
    expect(countsOf(inUtc, 'Agency')).toEqual({ completed: 16, failed: 0 });
  });

  it("ranks the clients by the viewer's today: a client busy only in Los Angeles' today is listed there alone", async () => {
    const la = (await (await userIn('America/Los_Angeles')).get('/dashboard')).body;
    const utc = (await (await userIn(null)).get('/dashboard')).body;
    const kolkata = (await (await userIn('Asia/Kolkata')).get('/dashboard')).body;
    // Los Angeles: both clients with calls ended today first, the most completed first, then the quiet ones by name.
    expect(accountsOf(la).slice(0, 4)).toEqual(['Agency', 'Zulu 1', 'Zulu 2', 'Quiet 001']);
    expect(countsOf(la, 'Zulu 1')).toEqual({ completed: 3, failed: 0 });
    // Elsewhere, Evening's calls ended yesterday: it has nothing to see, sorts after every quiet client by name and is
    // not listed.
    for (const body of [utc, kolkata]) {
      expect(accountsOf(body).slice(0, 3)).toEqual(['Agency', 'Zulu 2', 'Quiet 001']);
      expect(accountsOf(body)).not.toContain('Zulu 1');
      expect(accountsOf(body)).toHaveLength(1 + OVERVIEW_CLIENTS_MAX);
    }
  });
});
