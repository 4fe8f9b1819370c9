// The trigger while an upgrade's DDL runs: a migration that locks accounts and then calls (as 20261128100000 does, its
// foreign key to accounts first) forms a cycle with an acceptance that has written its call and waits for the
// account's waiting counter. PostgreSQL breaks it by undoing one of them; when that is the acceptance, it is sent
// again, and the client gets its 200 and one call, never a 500 (bench:scale (g) met one).
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

let app: App;
let databaseUrl: string;
let tenant: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  tenant = await createTenant(app.storage);
});

async function deadlocks(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    'SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(rows[0]!.n);
}

/** Waits until a backend other than `client`'s waits for a lock on `table`. */
async function someoneWaitsFor(client: pg.Client, table: string) {
  for (let i = 0; i < 500; i++) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks
        WHERE NOT granted AND relation = $1::regclass AND pid <> pg_backend_pid()`,
      [table],
    );
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nobody waited for ${table}`);
}

describe('the trigger during a migration that locks accounts, then calls', () => {
  it('is sent again when PostgreSQL undoes it to break the deadlock: 200 and one call', async () => {
    const ddl = new pg.Client({ connectionString: databaseUrl });
    const observer = new pg.Client({ connectionString: databaseUrl });
    await ddl.connect();
    await observer.connect();
    try {
      const before = await deadlocks(observer);
      await ddl.query('BEGIN');
      // The migration outwaits the acceptance's deadlock check, so that the acceptance is the one undone.
      await ddl.query(`SET LOCAL deadlock_timeout = '60s'`);
      await ddl.query('LOCK TABLE accounts IN SHARE ROW EXCLUSIVE MODE');
      const answer = trigger(app, tenant.key, { phone_number: '+14155550123' });
      await someoneWaitsFor(observer, 'accounts');
      // The acceptance holds its call's lock on calls and waits for accounts: this closes the cycle.
      await ddl.query('LOCK TABLE calls IN SHARE ROW EXCLUSIVE MODE');
      await ddl.query('COMMIT');
      const response = await answer;
      expect(response.statusCode, response.body).toBe(200);
      expect(await deadlocks(observer)).toBe(before + 1);
      const calls = await prismaOf(app).call.findMany({ where: { accountId: tenant.accountId } });
      expect(calls.map((c) => [c.phoneNumber, c.status])).toEqual([['+14155550123', 'initiated']]);
      const account = await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } });
      expect(account.waitingCalls).toBe(1);
    } finally {
      await ddl.query('ROLLBACK').catch(() => undefined);
      await ddl.end();
      await observer.end();
    }
  });
});
