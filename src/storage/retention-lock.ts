// The retention's own pool and the pass lock that makes one process at a time the deleter (retention.ts deletes).
// Hand-written: an advisory lock held by a transaction left open for the pass, which Prisma cannot hold.
import pg from 'pg';
import { BACKGROUND_WAIT_MS, behindTransactionPooler } from './database.js';
import { statement } from './statements.js';

/**
 * How long one batch may run (server side, SET LOCAL): long enough for a batch of calls with their cascades on a busy
 * machine, short enough that a stuck one gives its locks back.
 */
export const BATCH_TIMEOUT_MS = 30_000;

/**
 * The pass lock's two-key advisory lock (first key: a space of its own, clear of the claim's 72707370 and Prisma's
 * single-key migrate lock).
 */
const RETENTION_LOCK = [72707371, 0] as const;

const TRY_LOCK = statement(
  'oct_retention_try_lock',
  `SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK[0]}, ${RETENTION_LOCK[1]}) AS locked`,
);

/**
 * The retention's own connections, apart from the service's two pools: one holds the pass lock for the whole pass,
 * one runs the batches. A batch may take longer than the pools' 1.5 s query limit (made for requests and hot
 * background work), and a pass must not hold a connection the dispatcher is waiting for. Both close when idle.
 */
export function createRetentionPool(databaseUrl: string): pg.Pool {
  const { url } = behindTransactionPooler(databaseUrl);
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    connectionTimeoutMillis: BACKGROUND_WAIT_MS,
    // The server cancels a batch at BATCH_TIMEOUT_MS; this only catches a server that stopped answering.
    query_timeout: BATCH_TIMEOUT_MS + 5_000,
    idleTimeoutMillis: 5_000,
  });
  // As in createPrisma: a connection the server closes must not stop the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export interface RetentionLock {
  /** Fails when the lock's connection is gone (the lock went with it): the pass must stop. */
  confirm(): Promise<void>;
  release(): Promise<void>;
}

/**
 * The pass lock, or null when another process holds it. A transaction-level advisory lock held by a transaction left
 * open on a connection of its own for the whole pass (the batches commit on another connection). Not a session lock:
 * behind a transaction pooler (?pgbouncer=true) a session lock stays on whichever server connection ran the statement,
 * outlives the pass there and cannot be unlocked from the next one; a transaction keeps its server connection until
 * it ends. The open transaction wrote nothing and holds no snapshot between statements, so it keeps no row from
 * vacuum.
 */
export async function tryRetentionLock(pool: pg.Pool): Promise<RetentionLock | null> {
  const client = await pool.connect();
  let broken = false;
  const end = async () => {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    client.release(broken);
  };
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ locked: boolean }>({ ...TRY_LOCK });
    if (!rows[0]?.locked) {
      await end();
      return null;
    }
  } catch (error) {
    client.release(true);
    throw error;
  }
  return {
    // Taking it again within the transaction succeeds at once; it also keeps the transaction from looking idle.
    async confirm() {
      const { rows } = await client.query<{ locked: boolean }>({ ...TRY_LOCK });
      if (!rows[0]?.locked) throw new Error('the retention lock was lost');
    },
    release: end,
  };
}
