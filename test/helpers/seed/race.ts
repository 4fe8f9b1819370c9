// The other side of a race: a transaction on a connection of the test's own, held open while the service's work waits
// for its locks, then committed (test/helpers/seed.ts says why a test writes directly). Not src/storage/transaction.ts:
// that is the pool repositories' own helper, which nothing outside src/storage imports (eslint.config.js).
import type pg from 'pg';

/**
 * Runs `work` in a transaction on one connection of `pool` and commits it (rolls back if `work` throws): what `work`
 * writes or locks holds until it returns, so the test can start the service's side meanwhile and see it wait.
 */
export async function whileHolding<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** How many connections to the test's database wait for a lock now: the service's side of a race has reached it. */
export async function lockWaiters(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
  );
  return rows[0]!.n;
}
