// The database's side of readiness: one trivial statement on the pool the service's queries use.
import type pg from 'pg';
import { statement } from './statements.js';

// Hand-written on the pg pool rather than Prisma: a failure is the driver's own (a refused connection, a timeout),
// which readiness reports as is, not a Prisma preamble.
const PING = statement('oct_ping', 'SELECT 1');

/** Resolves when the database answers a statement through `pool`; rejects with the driver's error otherwise. */
export async function ping(pool: pg.Pool): Promise<void> {
  await pool.query({ ...PING });
}
