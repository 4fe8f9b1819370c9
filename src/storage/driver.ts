// What a repository runs on, and its two kinds: a Prisma repository runs on the client or on the transaction of
// Storage.transaction; a pool repository runs prepared statements on the pool and is never in a transaction's type.
import type pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Db } from './db-types.js';
import { SecretVault } from './secrets.js';
import { inTransaction } from './transaction.js';

/** The client, or the interactive transaction a transaction-scoped repository runs in: nothing else. */
export interface TransactionDriver {
  readonly prisma: Db;
  /** The storage's seal and open of secrets at rest (secrets.ts). */
  readonly secrets: SecretVault;
}

/** The pg pool, for the prepared statements (statements.ts) of a pool repository. */
export interface SqlDriver {
  readonly pool: pg.Pool;
  /** Absent for a repository that reads no secret (the retention's, on a pool of its own). */
  readonly secrets?: SecretVault;
}

/** The vault of a pool repository that reads no secret: it seals nothing and opens only values stored in clear. */
const NO_SECRETS = new SecretVault();

/** The pool side of a storage: the client over the pool, and the pool itself. Never handed into a transaction. */
export interface PoolDriver extends SqlDriver {
  readonly prisma: PrismaClient;
  readonly secrets: SecretVault;
}

/**
 * A repository of Prisma statements (and `$queryRaw` on the same client where a lock needs SQL), so every statement
 * runs on its driver: inside Storage.transaction, on the transaction's connection. Only these are in `Repositories`.
 */
export abstract class PrismaRepository {
  constructor(protected readonly driver: TransactionDriver) {}

  protected get prisma(): Db {
    return this.driver.prisma;
  }

  protected get secrets(): SecretVault {
    return this.driver.secrets;
  }
}

/**
 * A repository of prepared statements on the pool, for a hot path or a lock Prisma cannot express (each module says
 * which at its top). Its transactions are its own (`transaction`), on one pooled connection; it has no place in a
 * caller's transaction, so Storage.transaction's type does not offer it.
 */
export abstract class SqlRepository {
  constructor(private readonly sqlDriver: SqlDriver) {}

  protected get pool(): pg.Pool {
    return this.sqlDriver.pool;
  }

  protected get secrets(): SecretVault {
    return this.sqlDriver.secrets ?? NO_SECRETS;
  }

  /** Runs `work` in a transaction on one pooled connection (the storage's one helper for hand-written transactions). */
  protected transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.sqlDriver.pool, work);
  }
}
