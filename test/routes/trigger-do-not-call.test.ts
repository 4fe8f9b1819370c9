// The trigger and the do-not-call lists: a number on the list of the call's account, or of its agency, is refused with
// 400 "Phone number is on the do-not-call list" and nothing is stored; another account's list (a sibling client's,
// a client's for the agency's own calls, another agency's) does not count; numbers are compared exactly; the check
// comes after the calling window's and before the queue's; a refused Idempotency-Key is not remembered; and a long
// list is read through the unique index (two probes whatever its size; bench/ measures a million).
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { addToDoNotCall, removeFromDoNotCall } from '../../src/admin/do-not-call.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { seedDoNotCallNumbers } from '../helpers/seed.js';

let app: App;
let databaseUrl: string;
const t = {} as Record<'agency' | 'client' | 'sibling' | 'other', Tenant>;
const REFUSED = { success: false, error: 'Phone number is on the do-not-call list' };

beforeAll(async () => {
  // Noon UTC: a window of 09:00-10:00 UTC is closed, whatever the time the test runs at.
  ({ app, databaseUrl } = await buildTestApp({
    env: { MAX_QUEUED_CALLS: '3' },
    clock: () => new Date('2054-11-25T12:00:00Z'),
  }));
  t.agency = await createTenant(app.storage);
  t.client = await createClientTenant(app.storage, t.agency.accountId);
  t.sibling = await createClientTenant(app.storage, t.agency.accountId);
  t.other = await createTenant(app.storage);
});

const list = (tenant: Tenant, phoneNumber: string) =>
  addToDoNotCall(app.storage, { accountId: tenant.accountId, phoneNumber, actor: OPERATOR, now: app.now() });
const unlist = (tenant: Tenant, phoneNumber: string) =>
  removeFromDoNotCall(app.storage, { accountId: tenant.accountId, phoneNumber, actor: OPERATOR, now: app.now() });
const callsTo = (phoneNumber: string) => prismaOf(app).call.count({ where: { phoneNumber } });
const waitingOf = async (tenant: Tenant) =>
  (await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).waitingCalls;

describe("the trigger refuses a number on the call's account's or its agency's list", () => {
  it("an agency's list: the agency's own calls and every client's are refused; another agency's are not", async () => {
    await list(t.agency, '+14155550101');
    for (const tenant of [t.agency, t.client, t.sibling]) {
      const waiting = await waitingOf(tenant);
      const res = await trigger(app, tenant.key, { phone_number: '+14155550101' });
      expect([res.statusCode, res.json()]).toEqual([400, REFUSED]);
      expect(await waitingOf(tenant)).toBe(waiting);
    }
    expect(await callsTo('+14155550101')).toBe(0);
    const other = await trigger(app, t.other.key, { phone_number: '+14155550101' });
    expect(other.statusCode).toBe(200);
    expect(await callsTo('+14155550101')).toBe(1);
  });

  it("a client's list: that client's calls (the agency's key on the client's agent too), not its sibling's nor the agency's own", async () => {
    await list(t.client, '+14155550102');
    expect((await trigger(app, t.client.key, { phone_number: '+14155550102' })).json()).toEqual(REFUSED);
    expect((await trigger(app, t.sibling.key, { phone_number: '+14155550102' })).statusCode).toBe(200);
    // A call the agency's key places on the client's agent is listed for the client: the client's list applies.
    const agencyWithClientAgent = await trigger(app, t.agency.key, {
      phone_number: '+14155550102',
      agent_id: t.client.agentId,
    });
    expect(agencyWithClientAgent.json()).toEqual(REFUSED);
    expect((await trigger(app, t.agency.key, { phone_number: '+14155550102' })).statusCode).toBe(200);
  });

  it('compares numbers exactly: a neighbouring number is called', async () => {
    await list(t.other, '+442079460100');
    expect((await trigger(app, t.other.key, { phone_number: '+442079460100' })).statusCode).toBe(400);
    expect((await trigger(app, t.other.key, { phone_number: '+442079460101' })).statusCode).toBe(200);
    expect((await trigger(app, t.other.key, { phone_number: '+44207946010' })).statusCode).toBe(200);
  });

  it('accepts the number again once it is taken off the list', async () => {
    await list(t.sibling, '+14155550103');
    expect((await trigger(app, t.sibling.key, { phone_number: '+14155550103' })).statusCode).toBe(400);
    await unlist(t.sibling, '+14155550103');
    expect((await trigger(app, t.sibling.key, { phone_number: '+14155550103' })).statusCode).toBe(200);
  });
});

describe('its place among the checks', () => {
  it('comes after the number format and the calling window, before the full queue', async () => {
    const closed = await createTenant(app.storage, { windows: ['daily 09:00-10:00'], outsideWindow: 'reject' });
    await list(closed, '+14155550104');
    expect((await trigger(app, closed.key, { phone_number: '+14155550104' })).json()).toEqual({
      success: false,
      error: "Outside the agent's calling window",
    });
    expect((await trigger(app, closed.key, { phone_number: '+1415555010' })).json()).toEqual({
      success: false,
      error: 'Invalid phone number format',
    });

    const full = await createTenant(app.storage);
    for (let i = 0; i < 3; i++)
      expect((await trigger(app, full.key, { phone_number: '+14155550105' })).statusCode).toBe(200);
    expect((await trigger(app, full.key, { phone_number: '+14155550106' })).statusCode).toBe(429);
    await list(full, '+14155550106');
    expect((await trigger(app, full.key, { phone_number: '+14155550106' })).json()).toEqual(REFUSED);
  });

  it('an Idempotency-Key of a refused trigger is not remembered: the same key works once the number is unlisted', async () => {
    await list(t.agency, '+14155550107');
    const key = { 'idempotency-key': 'dnc-retry-1' };
    const refused = await trigger(app, t.agency.key, { phone_number: '+14155550107' }, key);
    expect(refused.json()).toEqual(REFUSED);
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    await unlist(t.agency, '+14155550107');
    const accepted = await trigger(app, t.agency.key, { phone_number: '+14155550107' }, key);
    expect(accepted.statusCode).toBe(200);
    const replay = await trigger(app, t.agency.key, { phone_number: '+14155550107' }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(callIdOf(replay)).toBe(callIdOf(accepted));
  });
});

describe('a long list', () => {
  it("is read through its unique index: the acceptance's check costs two index probes", async () => {
    const pg = (await import('pg')).default;
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      // Set-based, as bench/ seeds it; then ANALYZE so the planner knows the table is large.
      await seedDoNotCallNumbers(prismaOf(app), t.agency.accountId, 100_000);
      await db.query('ANALYZE do_not_call_entries');
      const { rows } = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT 1 FROM do_not_call_entries WHERE account_id IN ($1::uuid, $2::uuid) AND phone_number = $3`,
        [t.client.accountId, t.agency.accountId, '+12020000042'],
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index (Only )?Scan using do_not_call_entries_account_id_phone_number_key/);
      expect(plan).not.toMatch(/Seq Scan/);
    } finally {
      await db.end();
    }
    expect((await trigger(app, t.client.key, { phone_number: '+12020000042' })).json()).toEqual(REFUSED);
    expect((await trigger(app, t.client.key, { phone_number: '+12030000042' })).statusCode).toBe(200);
  });
});
