// The dashboard under load (issue 45, point 3): a signed-in user's requests in flight are capped, and whatever is
// refused or meets an overloaded database (pool exhausted, a statement timed out or left waiting) is the busy page,
// 503 with Retry-After, never a 500; another user's pages are answered meanwhile.
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { REQUEST_POOL } from '../../src/storage/database.js';
import { BUSY_MESSAGE, BUSY_RETRY_AFTER_SECONDS, USER_IN_FLIGHT_MAX } from '../../plugins/dashboard/busy.js';
import { buildTestApp, prismaOf, poolsOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor, type Answer } from './helpers.js';
import { insertCalls } from '../helpers/seed.js';

let app: App;
let databaseUrl: string;
const tenants = {} as Record<'A' | 'B', Tenant>;
const visitors = {} as Record<'A' | 'B', Visitor>;

const held: pg.PoolClient[] = [];
/** Takes `count` of the request pool's connections away from the app, as other work holding them would. */
async function hold(count: number) {
  const pool = poolsOf(app).requests;
  held.push(...(await Promise.all(Array.from({ length: count }, () => pool.connect()))));
}
afterEach(() => {
  for (const client of held.splice(0)) client.release();
});

/** A Calls-list refresh as the page's htmx asks for it, or the page as a browser loads it. */
const callsList = (visitor: Visitor, htmx: boolean) =>
  visitor.request('GET', '/dashboard/calls', undefined, htmx ? { 'hx-request': 'true', 'hx-target': 'live' } : {});

function expectBusy(answer: Answer) {
  expect(answer.status, answer.body.slice(0, 300)).toBe(503);
  expect(answer.headers['retry-after']).toBe(String(BUSY_RETRY_AFTER_SECONDS));
  expect(answer.body).toContain(html(BUSY_MESSAGE));
  expect(answer.headers['set-cookie']).toBeUndefined();
}

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ env: DASHBOARD_ENV, pools: true }));
  for (const name of ['A', 'B'] as const) {
    tenants[name] = await createTenant(app.storage);
    await insertCalls(prismaOf(app), {
      accountId: tenants[name].accountId,
      agentId: tenants[name].agentId,
      count: 60,
      createdAt: new Date(Date.now() - 3_600_000),
    });
    const email = `${name.toLowerCase()}@busy.example`;
    await createUserWithPassword(app.storage, tenants[name].accountId, email);
    visitors[name] = new Visitor(app);
    expect((await visitors[name].signIn(email)).status).toBe(303);
  }
});

describe('one user cannot take the dashboard from the others', () => {
  it(`50 concurrent Calls-list refreshes by one user: at most ${USER_IN_FLIGHT_MAX} at once, the rest 503 with Retry-After, none a 500; another user is answered meanwhile`, async () => {
    // A small pool: three of its connections are busy elsewhere.
    await hold(REQUEST_POOL.max - 3);
    const burst = Promise.all(Array.from({ length: 50 }, (_, i) => callsList(visitors.A, i % 2 === 0)));
    const other = Promise.all(Array.from({ length: 3 }, (_, i) => callsList(visitors.B, i % 2 === 0)));
    const [answers, others] = await Promise.all([burst, other]);

    expect(answers.map((a) => a.status).filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const refused = answers.filter((a) => a.status === 503);
    // At most USER_IN_FLIGHT_MAX at once: the rest are refused, but for the few that find a slot freed by an earlier
    // request answered before the burst's last arrived (a loaded machine spreads the burst: 45 refused once in CI).
    expect(refused.length).toBeGreaterThanOrEqual(50 - 2 * USER_IN_FLIGHT_MAX);
    for (const answer of refused) expectBusy(answer);
    expect(others.map((a) => a.status)).toEqual([200, 200, 200]);
    // Every slot came back: the user's next requests, as many as the cap allows at once, are all answered.
    held.splice(0).forEach((client) => client.release());
    const next = await Promise.all(Array.from({ length: USER_IN_FLIGHT_MAX }, () => callsList(visitors.A, true)));
    expect(next.map((a) => a.status)).toEqual(Array(USER_IN_FLIGHT_MAX).fill(200));
  });

  it('a page refused by the cap is the busy page in the error page frame; a form over the cap too', async () => {
    await hold(REQUEST_POOL.max - 1);
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => callsList(visitors.A, false)),
      // A form sent with them: refused by the cap, or (when it came first) by its missing token; not a 500.
      visitors.A.request('POST', '/dashboard/calls/cancel', { _csrf: 'not-a-token' }),
    ]);
    expect([403, 503]).toContain(answers.at(-1)!.status);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) {
      expectBusy(answer);
      expect(answer.body).toContain('<title>Busy · Outbound calls</title>');
    }
    expect(answers.map((a) => a.status).filter((s) => s >= 500 && s !== 503)).toEqual([]);
  });
});

describe('an overloaded database is the busy page, never a 500', () => {
  it('pool exhausted: a page and a live refresh are 503 with Retry-After; the next ones are answered', async () => {
    await hold(REQUEST_POOL.max);
    expectBusy(await callsList(visitors.A, false));
    expectBusy(await callsList(visitors.A, true));
    held.splice(0).forEach((client) => client.release());
    expect((await callsList(visitors.A, false)).status).toBe(200);
    expect((await visitors.A.get('/dashboard')).status).toBe(200);
  });

  /** Runs `work` while another connection holds `table` locked, so that statements reading it wait. */
  async function whileLocked<T>(table: string, work: () => Promise<T>): Promise<T> {
    const locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await work();
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  }

  it('a statement left waiting past the query timeout: 503, not 500', async () => {
    const answer = await whileLocked('calls', () => callsList(visitors.A, false));
    expectBusy(answer);
    expect((await callsList(visitors.A, false)).status).toBe(200);
  });

  it('a statement cancelled by statement_timeout: 503, not 500', async () => {
    const name = new URL(databaseUrl).pathname.slice(1);
    await prismaOf(app).$executeRawUnsafe(`ALTER DATABASE "${name}" SET statement_timeout = '200ms'`);
    try {
      // A replica on the same database: its connections open now, with the timeout.
      const { app: replica } = await buildTestApp({ env: DASHBOARD_ENV, databaseUrl });
      const visitor = new Visitor(replica);
      visitor.cookie = visitors.A.cookie;
      visitor.csrfCookie = visitors.A.csrfCookie;
      expect((await visitor.get('/dashboard/calls')).status).toBe(200);
      expectBusy(await whileLocked('calls', () => visitor.get('/dashboard/calls')));
    } finally {
      await prismaOf(app).$executeRawUnsafe(`ALTER DATABASE "${name}" RESET statement_timeout`);
    }
  });
});
