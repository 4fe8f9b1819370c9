// The database's side of readiness: one trivial statement on the pool the service's queries use.
import { statement } from './statements.js';
import { SqlRepository } from './driver.js';

// Hand-written on the pg pool rather than Prisma: a failure is the driver's own (a refused connection, a timeout),
// which readiness reports as is, not a Prisma preamble.
const PING = statement('oct_ping', 'SELECT 1');

export class HealthRepository extends SqlRepository {
  /** Resolves when the database answers a statement through `pool`; rejects with the driver's error otherwise. */
  async ping(): Promise<void> {
    await this.pool.query({ ...PING });
  }
}
