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
