// The dispatcher's expiry sweep reads the waiting calls' expiry index (migration 20261123160000), also as the
// generic plan its prepared statement runs with in production: not the waiting range of (status, not_before), whose
// dead entries after a drain made each sweep read every call dialled since the last vacuum.
import pg from 'pg';
import { expect, it } from 'vitest';
import '../../src/storage/call-claims.js';
import { declaredStatements } from '../../src/storage/statements.js';
import { freshDatabase } from '../helpers/database.js';

it('the expiry sweep is an index scan of calls_expiry_of_waiting, with its values and as a generic plan', async () => {
  const { url } = await freshDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { text } = declaredStatements().find((s) => s.name === 'oct_expired')!;
    await client.query(`PREPARE expired(timestamptz) AS ${text}`);
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      // An empty table would be read whole whatever its indexes: sequential scans off, the planner picks among indexes.
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE expired(now())`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan, mode).toMatch(/Index (Only )?Scan using calls_expiry_of_waiting on calls/);
    }
  } finally {
    await client.end();
  }
});
