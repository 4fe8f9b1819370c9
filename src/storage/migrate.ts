// Applies prisma/migrations without Prisma's native schema engine, recording them in `_prisma_migrations`
// exactly as `prisma migrate deploy` does, under the same advisory lock, so either tool can take over.
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
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
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
 * Applies every migration not yet recorded, each in its own transaction together with its record.
 * Refuses to run past a migration that Prisma recorded as failed, like `prisma migrate deploy` (P3009).
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
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
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
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
