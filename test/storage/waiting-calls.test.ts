// accounts.waiting_calls is kept by triggers on calls: exact after acceptances, transitions, batches over several
// accounts, hand-written SQL, deletes and truncation. Acceptance trusts it for the queue bound.
import { describe, expect, it } from 'vitest';
import { applyCallUpdate } from '../../src/calls/transition.js';
import type { App } from '../../src/app.js';
import { sqlPool } from '../../src/storage/database.js';
import { buildTestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

async function counters(app: App) {
  const { rows } = await sqlPool(app.prisma).query<{ id: string; kept: number; counted: number }>(`
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
    const sql = sqlPool(app.prisma);
    const a = await createTenant(app.prisma);
    const b = await createTenant(app.prisma);
    const ids: Record<string, string[]> = { a: [], b: [] };
    for (let i = 0; i < 5; i++) ids.a!.push((await trigger(app, a.key)).json().call_id);
    await Promise.all(Array.from({ length: 3 }, async () => ids.b!.push((await trigger(app, b.key)).json().call_id)));
    await expectExact(app, { [a.accountId]: 5, [b.accountId]: 3 });

    // An operator cancels one; a second cancel changes nothing.
    const context = { now: new Date(), source: 'operator' };
    await applyCallUpdate(app.prisma, ids.a![0]!, { kind: 'failed', reason: 'canceled' }, context);
    await applyCallUpdate(app.prisma, ids.a![0]!, { kind: 'failed', reason: 'canceled' }, context);
    await expectExact(app, { [a.accountId]: 4, [b.accountId]: 3 });

    // Hand-written SQL: one statement over both accounts, out of and back into waiting.
    await sql.query(`UPDATE calls SET status = 'dialing' WHERE id = ANY($1::uuid[])`, [[ids.a![1], ids.b![0], ids.b![1]]]);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 1 });
    await sql.query(`UPDATE calls SET status = 'initiated' WHERE id = ANY($1::uuid[])`, [[ids.b![0]]]);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });
    // An update that moves nothing in or out.
    await sql.query(`UPDATE calls SET name = 'renamed'`);
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });

    // Deletes: waiting and not waiting.
    await sql.query(`DELETE FROM calls WHERE id = ANY($1::uuid[])`, [[ids.a![2], ids.a![1]]]);
    await expectExact(app, { [a.accountId]: 2, [b.accountId]: 2 });

    // The queue bound reads it: with 2 waiting and MAX_QUEUED_CALLS=3, one more is accepted, then 429.
    const bounded = (await buildTestApp({ databaseUrl, env: { MAX_QUEUED_CALLS: '3' } })).app;
    expect((await trigger(bounded, a.key)).statusCode).toBe(200);
    expect((await trigger(bounded, a.key)).json()).toEqual({ success: false, error: 'Too many calls waiting. Retry after 30 seconds.' });
    await expectExact(app, { [a.accountId]: 3, [b.accountId]: 2 });

    await sql.query('TRUNCATE calls CASCADE');
    await expectExact(app, { [a.accountId]: 0, [b.accountId]: 0 });
  });
});
