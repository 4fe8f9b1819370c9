// Acceptance where PostgreSQL refuses the per-connection temporary function (TEMPORARY revoked): every connection
// works without it and acceptance takes the lock-then-count transaction, with the same answers and the same bound.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sessionsPrepared } from '../../src/storage/database.js';
import { buildTestApp } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

const ROLE = 'oct_test_no_temporary';

async function asOwner(url: string, sql: string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of sql) await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('acceptance without the temporary function', () => {
  it('keeps the queue bound exact, with one event per accepted call', async () => {
    const { url, name } = await freshDatabase();
    await asOwner(url, [
      // Roles are cluster-wide: another run may have made it already.
      `DO $$ BEGIN CREATE ROLE ${ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
      `REVOKE TEMPORARY ON DATABASE ${name} FROM PUBLIC`,
      `GRANT USAGE ON SCHEMA public TO ${ROLE}`,
      `GRANT ALL ON ALL TABLES IN SCHEMA public TO ${ROLE}`,
    ]);
    const restricted = new URL(url);
    restricted.username = ROLE;
    restricted.password = '';

    const { app } = await buildTestApp({ databaseUrl: restricted.toString(), env: { MAX_QUEUED_CALLS: '5' } });
    const tenant = await createTenant(app.prisma);
    const responses = await Promise.all(Array.from({ length: 30 }, () => trigger(app, tenant.key)));
    expect(sessionsPrepared()).toBe(false);

    const accepted = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode === 429);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(25);
    expect(refused[0]!.json()).toEqual({ success: false, error: 'Too many calls waiting. Retry after 30 seconds.' });
    expect(await app.prisma.call.count({ where: { accountId: tenant.accountId } })).toBe(5);
    expect(await app.prisma.callEvent.count({ where: { call: { accountId: tenant.accountId } } })).toBe(5);
  });
});
