// A transaction on one pooled connection, for the hand-written statements of the storage modules.
import type pg from 'pg';

/** Runs `work` in a transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A connection that could not even roll back is not given to anyone else.
    client.release(broken);
  }
}

/** deadlock_detected: PostgreSQL undid the statement (and its transaction) to break a cycle of lock waits. */
const DEADLOCK_DETECTED = '40P01';

/**
 * Runs `work`, and once more (up to `attempts` in all) when PostgreSQL chose it to break a deadlock: what it wrote was
 * undone with it, so it can run again as it was. For a statement run on its own (autocommit) or a whole transaction;
 * never for a statement inside a larger transaction, which the deadlock aborted too. Cycles arise with the DDL of an
 * upgrade under way (a migration that locks accounts, then calls, while an acceptance holds calls and waits for
 * accounts: bench:scale (g) met one), and the client should not get a 500 for a call it may simply send again.
 */
export async function againIfDeadlocked<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || (error as { code?: unknown }).code !== DEADLOCK_DETECTED) throw error;
    }
  }
}
