// accounts.waiting_calls is kept by triggers on calls: exact after acceptances, transitions, batches over several
// accounts, hand-written SQL, deletes and truncation. Acceptance trusts it for the queue bound.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { applyCallUpdate } from '../../src/calls/transition.js';
import type { App } from '../../src/app.js';
import { sqlPool } from '../../src/storage/database.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { insertAgencies, insertCallAt } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

async function counters(app: App) {
  const { rows } = await sqlPool(prismaOf(app)).query<{ id: string; kept: number; counted: number }>(`
    SELECT a.id, a.waiting_calls AS kept,
           (SELECT count(*)::int FROM calls c WHERE c.account_id = a.id AND c.status = 'initiated') AS counted
      FROM accounts a`);
  return rows;
}

async function expectExact(app: App, expected: Record<string, number>) {
  const rows = await counters(app);
  for (const row of rows) expect(row.kept, `account ${row.id}`).toBe(row.counted);
  for (const [accountId, n] of Object.entries(expected)) expect(rows.find((r) => r.id === accountId)?.kept).toBe(n);
}

describe('accounts.waiting_calls', () => {
  it('stays equal to the number of waiting calls whatever writes the calls', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const sql = sqlPool(prismaOf(app));
    const a = await createTenant(app.storage);
    const b = await createTenant(app.storage);
    const ids: Record<string, string[]> = { a: [], b: [] };
    for (let i = 0; i < 5; i++) ids.a!.push(callIdOf(await trigger(app, a.key)));
    await Promise.all(Array.from({ length: 3 }, async () => ids.b!.push(callIdOf(await trigger(app, b.key)))));
    await expectExact(app, { [a.accountId]: 5, [b.accountId]: 3 });

    // An operator cancels one; a second cancel changes nothing.
    const context = { now: new Date(), source: 'operator' };
    await applyCallUpdate(app.storage, ids.a![0]!, { kind: 'failed', reason: 'canceled' }, context);
    await applyCallUpdate(app.storage, ids.a![0]!, { kind: 'failed', reason: 'canceled' }, context);
    await expectExact(app, { [a.accountId]: 4, [b.accountId]: 3 });

    // Hand-written SQL (the subject, so inline, not the seeder's): one statement over both accounts, out of and back
    // into waiting.
    await sql.query(`UPDATE calls SET status = 'dialing' WHERE id = ANY($1::uuid[])`, [
      [ids.a![1], ids.b![0], ids.b![1]],
    ]);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 1 });
    await sql.query(`UPDATE calls SET status = 'initiated' WHERE id = ANY($1::uuid[])`, [[ids.b![0]]]);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });
    // An update that moves nothing in or out.
    await sql.query(`UPDATE calls SET name = 'renamed'`);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });

    // Hand-written deletes (inline too): waiting and not waiting.
    await sql.query(`DELETE FROM calls WHERE id = ANY($1::uuid[])`, [[ids.a![2], ids.a![1]]]);
    await expectExact(app, { [a.accountId]: 2, [b.accountId]: 2 });

    // The queue bound reads it: with 2 waiting and MAX_QUEUED_CALLS=3, one more is accepted, then 429.
    const bounded = (await buildTestApp({ databaseUrl, env: { MAX_QUEUED_CALLS: '3' } })).app;
    expect((await trigger(bounded, a.key)).statusCode).toBe(200);
    expect((await trigger(bounded, a.key)).json()).toEqual({
      success: false,
      error: 'Too many calls waiting. Retry after 30 seconds.',
    });
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });

    await sql.query('TRUNCATE calls CASCADE');
    await expectExact(app, { [a.accountId]: 0, [b.accountId]: 0 });
  });

  it('is kept by primary-key lookups of the accounts touched, not by reading the accounts table, however many accounts there are', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const sql = sqlPool(prismaOf(app));
    // Enough accounts that a plan reading the table is a real cost (with 10,000 it took 11 ms of every acceptance).
    await insertAgencies(sql, { prefix: 'Other ', count: 5000 });
    await sql.query('ANALYZE accounts');
    // Every plan the acceptance runs, nested ones (the function, its trigger, the counter's update) included, as notices.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const plans: string[] = [];
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    try {
      await client.query(`LOAD 'auto_explain'`);
      for (const setting of [
        'auto_explain.log_min_duration = 0',
        'auto_explain.log_nested_statements = on',
        `auto_explain.log_level = 'notice'`,
      ]) {
        await client.query(`SET ${setting}`);
      }
      // A waiting call written on this connection: its trigger's statements are planned here.
      await insertCallAt(client, { accountId: tenant.accountId, agentId: tenant.agentId, createdAt: new Date() });
    } finally {
      await client.end();
    }
    const counterPlans = plans.filter((p) => p.includes('accounts'));
    expect(counterPlans.length).toBeGreaterThanOrEqual(2);
    expect(counterPlans.filter((p) => /Seq Scan on accounts/.test(p))).toEqual([]);
    await expectExact(app, { [tenant.accountId]: 1 });
  });
});
