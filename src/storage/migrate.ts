// Applies prisma/migrations without Prisma's native schema engine, recording them in `_prisma_migrations`
// exactly as `prisma migrate deploy` does, under the same advisory lock, so either tool can take over. A migration
// that is one `… INDEX CONCURRENTLY` statement runs outside a transaction, so building an index on a large table
// does not block writes; it resumes safely after a failure (an invalid index left behind is dropped and rebuilt). So
// does one that is a `DO` block committing between batches (a fill of a large table's new column). A
// migration's `locks` file names the table locks its transaction takes first, in that order (see LockFirst).
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR } from '../paths.js';
/** The lock id Prisma's schema engine takes for migrate commands: two migrators never run at once. */
const PRISMA_MIGRATE_LOCK = 72707369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
  /**
   * Set for a migration that is one `CREATE/DROP/REINDEX … CONCURRENTLY` statement, or one `DO` block that commits
   * between batches (batchedStep): it runs outside a transaction.
   */
  online?: OnlineStep;
  /** The table locks its transaction takes before its SQL, in order (its `locks` file). */
  locksFirst?: LockFirst[];
}

/**
 * A table lock a migration's transaction takes before its SQL runs: one line `<table> <LOCK MODE>` of the migration's
 * `locks` file (`#` starts a comment). A migration that locks two tables that requests write in one order (an
 * acceptance inserts its call, then its trigger updates the account's counter) must take them in that order, or each
 * waits for the other until PostgreSQL's deadlock check (1 s) undoes one of them; the file gives a migration already
 * applied somewhere that order without changing its SQL, whose checksum is recorded. It changes when the locks are
 * taken, never what the migration does; `prisma migrate deploy` ignores it.
 */
export interface LockFirst {
  table: string;
  mode: string;
}

const LOCK_MODES = [
  'ACCESS SHARE',
  'ROW SHARE',
  'ROW EXCLUSIVE',
  'SHARE UPDATE EXCLUSIVE',
  'SHARE',
  'SHARE ROW EXCLUSIVE',
  'EXCLUSIVE',
  'ACCESS EXCLUSIVE',
];

/** A migration's `locks` file, checked before anything runs; none when it has no such file. */
export function locksFirst(name: string, text: string | null): LockFirst[] {
  if (text === null) return [];
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => {
      const [, table, mode] = /^([a-z_][a-z0-9_]*)\s+([A-Z ]+)$/.exec(line) ?? [];
      const normalised = mode?.split(/\s+/).join(' ');
      if (table === undefined || normalised === undefined || !LOCK_MODES.includes(normalised)) {
        throw new MigrationError(
          `migration ${name}: its locks file has "${line}"; each line is a table and a lock mode (calls SHARE ROW EXCLUSIVE)`,
        );
      }
      return { table, mode: normalised };
    });
}

async function readOptional(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The one statement of an online migration, and the index it builds (for a `CREATE INDEX`). */
export interface OnlineStep {
  statement: string;
  builds: string | null;
}
export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await fs.readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      const online = onlineStep(name, sql);
      const locks = locksFirst(name, await readOptional(path.join(dir, name, 'locks')));
      if (online && locks.length > 0)
        throw new MigrationError(`migration ${name} runs outside a transaction: it cannot take locks first`);
      return {
        name,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
        ...(online ? { online } : {}),
        ...(locks.length > 0 ? { locksFirst: locks } : {}),
      };
    }),
  );
}

/** SQL without its comments (the statements of a migration never hold `--` or `/*` inside a string). */
function withoutComments(sql: string): string {
  return sql.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
}

const CREATE_INDEX_CONCURRENTLY =
  /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?("?)([A-Za-z_][A-Za-z0-9_$]*)\1\s+ON\b/i;

/**
 * The online step of a migration that uses CONCURRENTLY (or commits in a DO block: batchedStep), or null for an
 * ordinary one. PostgreSQL runs CONCURRENTLY only outside a transaction block, and `prisma migrate deploy` sends a
 * file as one script, so such a migration must be exactly one statement (as Prisma's documentation asks too);
 * anything else is refused before it runs.
 */
export function onlineStep(name: string, sql: string): OnlineStep | null {
  const plain = withoutComments(sql);
  if (/\bDO\s+\$[A-Za-z_]*\$/i.test(plain) && /\bCOMMIT\b/i.test(plain)) return batchedStep(name, plain);
  if (!/\bCONCURRENTLY\b/i.test(plain)) return null;
  const statements = plain
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  if (statements.length !== 1) {
    throw new MigrationError(
      `migration ${name} uses CONCURRENTLY with ${statements.length} statements: put each CONCURRENTLY statement in a migration of its own`,
    );
  }
  const statement = statements[0]!;
  if (!/^(CREATE\s+(UNIQUE\s+)?INDEX|DROP\s+INDEX|REINDEX)\b/i.test(statement)) {
    throw new MigrationError(
      `migration ${name} uses CONCURRENTLY in a statement the runner cannot resume: ${statement}`,
    );
  }
  return { statement, builds: CREATE_INDEX_CONCURRENTLY.exec(statement)?.[2] ?? null };
}

/**
 * A migration that fills a large table in batches: one `DO` block that commits after each batch (PL/pgSQL allows
 * COMMIT there only outside a transaction block), so that no row stays locked longer than a batch and an upgrade of
 * millions of rows does not hold back the service's writes. Like a CONCURRENTLY step it runs on its own and is
 * recorded once it finished; after a failure the next start runs it again, so it must be written to resume (skip what
 * a batch already filled): 20261129100001 is one. Exactly one statement, the block, or it is refused.
 */
function batchedStep(name: string, plain: string): OnlineStep {
  const body = /^\s*DO\s+(\$[A-Za-z_]*\$)[\s\S]*\1\s*;?\s*$/.exec(plain);
  if (!body) {
    throw new MigrationError(
      `migration ${name} commits inside a DO block: the block must be the migration's only statement`,
    );
  }
  return { statement: plain.trim(), builds: null };
}

/**
 * Runs an online step outside a transaction. A build that failed or was killed half-way leaves an invalid index of
 * that name behind (which IF NOT EXISTS would then keep): it is dropped first, so the build starts over. A valid index
 * of that name means the build finished before its record was written: there is nothing left to do.
 */
async function runOnline(client: pg.Client, step: OnlineStep): Promise<void> {
  if (step.builds !== null) {
    const { rows } = await client.query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = $1 AND pg_table_is_visible(c.oid)`,
      [step.builds],
    );
    if (rows[0]?.valid === true) return;
    if (rows[0]?.valid === false) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${step.builds}"`);
  }
  await client.query(step.statement);
}

/**
 * Waits for the migrate lock by asking again every 100 ms rather than in one blocking statement: a statement waiting
 * holds a snapshot, and a CONCURRENTLY build in the process that has the lock waits for every older snapshot to go,
 * so the two would wait on each other.
 */
async function takeLock(client: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [
      PRISMA_MIGRATE_LOCK,
    ]);
    if (rows[0]!.got) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies every migration not yet recorded, each in its own transaction together with its record; an online one
 * (CONCURRENTLY) runs on its own and is recorded once it finished, so after a failure the next start runs it again.
 * Refuses to run past a migration that Prisma recorded as failed, like `prisma migrate deploy` (P3009).
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await takeLock(client);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed) {
      throw new MigrationError(
        `migration ${failed.migration_name} failed earlier and must be resolved before others can run`,
      );
    }
    const done = new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r.checksum]));
    const result: MigrateResult = { applied: [], alreadyApplied: [] };
    for (const migration of migrations) {
      const recorded = done.get(migration.name);
      if (recorded !== undefined) {
        if (recorded !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was changed after it was applied (checksum differs)`);
        }
        result.alreadyApplied.push(migration.name);
        continue;
      }
      const record = () =>
        client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
      if (migration.online) {
        try {
          await runOnline(client, migration.online);
        } catch (error) {
          throw new MigrationError(
            `migration ${migration.name} failed (it runs again at the next start): ${(error as Error).message}`,
          );
        }
        await record();
        result.applied.push(migration.name);
        continue;
      }
      await client.query('BEGIN');
      try {
        for (const { table, mode } of migration.locksFirst ?? [])
          await client.query(`LOCK TABLE "${table}" IN ${mode} MODE`);
        await client.query(migration.sql);
        await record();
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
      }
      result.applied.push(migration.name);
    }
    return result;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}
