// The dispatcher's poll on a queue that is not due (calls waiting for tomorrow's window or scheduled for tomorrow):
// the due-accounts query and the expiry sweep read what is due or expired, not the waiting calls, with their values
// and as the generic plan a prepared statement settles on. Both read every waiting call on each poll (four a second)
// before migration 20261129010000: the due-accounts query through (account_id, status, created_at), the expiry sweep
// from a generic plan that guessed a third of the waiting calls expired and scanned the table for 500 of them.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDueAccounts } from '../../src/storage/call-claims.js';
import { declaredStatements } from '../../src/storage/statements.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls, type CallRow } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  renderPlan,
  rowsReadFrom,
  sessionPlanning,
  type PlanNode,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

/** Accounts with a queue for tomorrow, and each one's waiting calls: half plain (a window), half scheduled. */
const QUEUED_ACCOUNTS = 10;
const QUEUE = 1_000;
const FINISHED = 3_000;
const MODES = ['auto', 'force_generic_plan'] as const;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
const queued: Tenant[] = [];
let due: Tenant;
let expired: Tenant;
const now = new Date();
const minutes = (n: number) => new Date(now.getTime() + n * 60_000);

/** `count` calls of `tenant` in `status`, not before `notBefore`, expiring at `expiresAt`; `scheduled`: a scheduled_at. */
async function insertCalls(
  tenant: Tenant,
  count: number,
  {
    status,
    notBefore,
    expiresAt,
    scheduled = false,
  }: { status: NonNullable<CallRow['status']>; notBefore: Date; expiresAt: Date; scheduled?: boolean },
) {
  await bulkInsertCalls(
    client,
    Array.from({ length: count }, (_, i) => {
      const g = i + 1;
      return {
        accountId: tenant.accountId,
        agentId: tenant.agentId,
        phoneNumber: `+1415${String(g).padStart(7, '0')}`,
        status,
        notBefore: new Date(notBefore.getTime() + g),
        expiresAt,
        scheduledAt: scheduled ? notBefore : null,
        createdAt: new Date(now.getTime() - g * 1000),
        updatedAt: now,
        endedAt: status === 'completed' || status === 'failed' ? now : null,
      };
    }),
  );
}

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture));
  const storage = storages[0]!.storage;
  for (let i = 0; i < QUEUED_ACCOUNTS; i++) {
    const tenant = await createTenant(storage);
    const waiting = { status: 'initiated' as const, notBefore: minutes(24 * 60), expiresAt: minutes(48 * 60) };
    await insertCalls(tenant, QUEUE / 2, waiting);
    await insertCalls(tenant, QUEUE / 2, { ...waiting, scheduled: true });
    await insertCalls(tenant, FINISHED / QUEUED_ACCOUNTS, {
      status: 'completed',
      notBefore: minutes(-60),
      expiresAt: now,
    });
    queued.push(tenant);
  }
  due = await createTenant(storage);
  await insertCalls(due, 3, { status: 'initiated', notBefore: minutes(-1), expiresAt: minutes(60) });
  await insertCalls(due, QUEUE, { status: 'initiated', notBefore: minutes(24 * 60), expiresAt: minutes(48 * 60) });
  expired = await createTenant(storage);
  await insertCalls(expired, 3, { status: 'initiated', notBefore: minutes(-120), expiresAt: minutes(-1) });
  // What autovacuum's analyze would have found: most calls are waiting ones.
  await client.query('ANALYZE calls');
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the dispatcher's poll on a queue that is not due", () => {
  it('the due-accounts query probes each queued account once, with its values and as the generic plan', async () => {
    for (const mode of MODES) {
      const poller = await sessionPlanning(client, mode);
      capture.start();
      try {
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const { result: locked, plans } = await capture.plansDuring('due accounts', async () => {
            await poller.query('BEGIN');
            try {
              return await lockDueAccounts(poller, { now, maxActive: 10, limit: 50 });
            } finally {
              await poller.query('ROLLBACK');
            }
          });
          expect(locked).toEqual([due.accountId]);
          expect(plans.length).toBeGreaterThan(0);
          // Per account with a queue: its first entry up to now (the expired account's three, the due one's first).
          const read = rowsReadFrom(plans, 'calls');
          expect(read, `${mode}, run ${i + 1}\n${plans.flatMap(renderPlan).join('\n')}`).toBeLessThanOrEqual(20);
        }
      } finally {
        capture.stop();
        await poller.end();
      }
    }
  });

  it('the expiry sweep reads the expired calls from the expiry index, with its values and as the generic plan', async () => {
    const { text } = declaredStatements().find((s) => s.name === 'oct_expired')!;
    for (const mode of MODES) {
      const sweeper = await sessionPlanning(client, mode);
      try {
        await sweeper.query(`PREPARE expired(timestamptz) AS ${text}`);
        for (let i = 0; i < 6; i++) {
          const { rows } = await sweeper.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
            `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE expired('${now.toISOString()}')`,
          );
          const plan = rows[0]!['QUERY PLAN'][0].Plan;
          const rendered = renderPlan(plan).join('\n');
          expect(rendered, mode).toMatch(/Index (Only )?Scan using calls_expiry_of_waiting on calls/);
          expect(rowsReadFrom(plan, 'calls'), `${mode}, run ${i + 1}\n${rendered}`).toBeLessThanOrEqual(3);
        }
        const { rows } = await sweeper.query<{ id: string }>(`EXECUTE expired('${now.toISOString()}')`);
        expect(rows).toHaveLength(3);
      } finally {
        await sweeper.end();
      }
    }
  });
});
