// What a repository runs on: the Prisma client (or the Prisma transaction it is scoped to) and the pg pool under it.
import pg from 'pg';
import type { Db } from './db-types.js';

export interface Driver {
  /** The client, or the interactive transaction a transaction-scoped repository runs in. */
  readonly prisma: Db;
  /** The pg pool under the client, for the hand-written statements (each says why it is hand-written). */
  readonly pool: pg.Pool;
}

/** A repository: one aggregate's statements and row mappers over its driver. */
export abstract class Repository {
  constructor(protected readonly driver: Driver) {}

  protected get prisma(): Db {
    return this.driver.prisma;
  }

  protected get pool(): pg.Pool {
    return this.driver.pool;
  }
}
