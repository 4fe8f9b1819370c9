// The scale bench's bulk-load sessions (bench/scale/data.ts): connections tuned for loading (their own session
// settings: the server's stay stock), work spread over them, the indexes and constraints of the big tables dropped
// before the load and made again after it, from their own definitions as the migrations left them (read from the
// catalog first, so nothing drifts), and the churn that a deployment's updates leave behind.
import fs from 'node:fs';
import pg from 'pg';

/** The tables the history goes into. */
export const BULK_TABLES = ['calls', 'call_events', 'webhook_deliveries', 'webhook_attempts'] as const;

/**
 * A connection for bulk work: no waiting for the WAL flush at commit, memory for sorts and index builds, no parallel
 * workers (the sessions themselves run side by side). `replica` skips triggers and foreign-key checks (superuser).
 */
export async function openSession(databaseUrl: string, options: { replica?: boolean } = {}): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`SET synchronous_commit = off; SET maintenance_work_mem = '2GB'; SET work_mem = '512MB';
    SET max_parallel_maintenance_workers = 0; SET max_parallel_workers_per_gather = 0; SET statement_timeout = 0`);
  if (options.replica) await client.query(`SET session_replication_role = replica`);
  return client;
}

/**
 * CPU seconds (user + system) the sessions' server processes have used so far, read from /proc (the database runs on
 * this machine in the bench; elsewhere 0): how much work a phase was, whatever else the shared machine was doing.
 */
export async function backendCpuSeconds(sessions: pg.Client[]): Promise<number> {
  let total = 0;
  for (const db of sessions) {
    const pid = (db as pg.Client & { processID?: number }).processID;
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Not on this machine, or not readable.
    }
  }
  return total;
}

/** Runs the tasks in order over the sessions, each session taking the next task when it is free. */
export async function spread<T, R>(
  sessions: pg.Client[],
  tasks: T[],
  run: (db: pg.Client, task: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(tasks.length);
  let next = 0;
  await Promise.all(
    sessions.map(async (db) => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await run(db, tasks[i]!, i);
      }
    }),
  );
  return results;
}

export interface DroppedSchema {
  /** CREATE INDEX statements (primary keys' included), as pg_indexes has them. */
  indexes: { table: string; name: string; definition: string; primaryKey: boolean }[];
  /** Foreign keys from or to the bulk tables, as pg_get_constraintdef has them. */
  foreignKeys: { table: string; name: string; definition: string }[];
}

/** Drops every index, primary key and foreign key of the bulk tables (and foreign keys pointing at them); returns their definitions. */
export async function dropBulkSchema(db: pg.ClientBase): Promise<DroppedSchema> {
  const { rows: indexes } = await db.query<{ table: string; name: string; definition: string; primary_key: boolean }>(
    `
    SELECT i.tablename AS table, i.indexname AS name, i.indexdef AS definition,
           EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.contype = 'p') AS primary_key
      FROM pg_indexes i WHERE i.schemaname = current_schema() AND i.tablename = ANY($1::text[])`,
    [BULK_TABLES],
  );
  const { rows: foreignKeys } = await db.query<{ table: string; name: string; definition: string }>(
    `
    SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c
     WHERE c.contype = 'f' AND (c.conrelid = ANY($1::regclass[]) OR c.confrelid = ANY($1::regclass[]))`,
    [BULK_TABLES],
  );
  const { rows: others } = await db.query<{ name: string }>(
    `
    SELECT conname AS name FROM pg_constraint WHERE contype IN ('u', 'x') AND conrelid = ANY($1::regclass[])`,
    [BULK_TABLES],
  );
  if (others.length > 0)
    throw new Error(
      `unexpected unique or exclusion constraints on the bulk tables: ${others.map((o) => o.name).join(', ')}`,
    );
  for (const fk of foreignKeys) await db.query(`ALTER TABLE ${fk.table} DROP CONSTRAINT "${fk.name}"`);
  for (const index of indexes) {
    if (index.primary_key) await db.query(`ALTER TABLE ${index.table} DROP CONSTRAINT "${index.name}"`);
    else await db.query(`DROP INDEX "${index.name}"`);
  }
  return {
    indexes: indexes.map((i) => ({
      table: i.table,
      name: i.name,
      definition: i.definition,
      primaryKey: i.primary_key,
    })),
    foreignKeys,
  };
}

/** Rough cost of building an index on a table, to start the longest builds first. */
const TABLE_WEIGHT: Record<string, number> = { call_events: 4, calls: 3, webhook_deliveries: 2, webhook_attempts: 1 };

/**
 * Makes the indexes dropBulkSchema dropped, as they were (the longest first, spread over the sessions), and the primary
 * keys on theirs; restoreForeignKeys does the rest.
 */
export async function rebuildBulkSchema(
  sessions: pg.Client[],
  dropped: DroppedSchema,
  log: (line: string) => void,
): Promise<void> {
  const builds = [...dropped.indexes].sort((a, b) => (TABLE_WEIGHT[b.table] ?? 0) - (TABLE_WEIGHT[a.table] ?? 0));
  await spread(sessions, builds, async (db, index) => {
    const started = performance.now();
    await db.query(index.definition);
    log(`  index ${index.name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
  const db = sessions[0]!;
  for (const index of dropped.indexes.filter((i) => i.primaryKey)) {
    await db.query(`ALTER TABLE ${index.table} ADD CONSTRAINT "${index.name}" PRIMARY KEY USING INDEX "${index.name}"`);
  }
}

/**
 * Adds the foreign keys back (NOT VALID first, then validated side by side: validation takes weaker locks than adding,
 * and one table's constraints go in one session since VALIDATE locks its table against itself).
 */
export async function restoreForeignKeys(
  sessions: pg.Client[],
  dropped: DroppedSchema,
  log: (line: string) => void,
): Promise<void> {
  const db = sessions[0]!;
  for (const fk of dropped.foreignKeys)
    await db.query(`ALTER TABLE ${fk.table} ADD CONSTRAINT "${fk.name}" ${fk.definition} NOT VALID`);
  const byTable = [...new Set(dropped.foreignKeys.map((fk) => fk.table))]
    .sort((a, b) => (TABLE_WEIGHT[b] ?? 0) - (TABLE_WEIGHT[a] ?? 0))
    .map((table) => dropped.foreignKeys.filter((fk) => fk.table === table));
  await spread(sessions, byTable, async (session, fks) => {
    for (const fk of fks) {
      const started = performance.now();
      await session.query(`ALTER TABLE ${fk.table} VALIDATE CONSTRAINT "${fk.name}"`);
      log(`  foreign key ${fk.name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  });
}

/** The smallest UUIDv7 of an instant (ids of the history are UUIDv7 of their row's time: a range of ids is a range of time). */
function v7Floor(ms: number): string {
  const hex = Math.floor(ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * The churn of the last `days`, with every index in place, a day at a time over the sessions: each call updated twice
 * (answered, then ended: the service writes a call's row at each status) and each delivery once (marked sent). The
 * values are left as they are; each update still writes a new row version, which leaves the old one dead and, as the
 * bulk-loaded pages are full, new entries in every index.
 */
export async function churn(
  sessions: pg.Client[],
  options: { now: Date; days: number; log: (line: string) => void },
): Promise<{ calls: number; deliveries: number }> {
  const day = 86_400_000;
  const windows = Array.from({ length: options.days }, (_, i) => ({
    from: v7Floor(options.now.getTime() - (options.days - i) * day),
    to: v7Floor(options.now.getTime() - (options.days - i - 1) * day + (i === options.days - 1 ? day : 0)),
  }));
  const totals = { calls: 0, deliveries: 0 };
  await spread(sessions, windows, async (db, w) => {
    for (let pass = 0; pass < 2; pass++) {
      const { rowCount } = await db.query('UPDATE calls SET updated_at = updated_at WHERE id >= $1 AND id < $2', [
        w.from,
        w.to,
      ]);
      totals.calls += rowCount ?? 0;
    }
    const { rowCount } = await db.query(
      'UPDATE webhook_deliveries SET completed_at = completed_at WHERE id >= $1 AND id < $2',
      [w.from, w.to],
    );
    totals.deliveries += rowCount ?? 0;
  });
  options.log(`  churn: ${totals.calls} call updates, ${totals.deliveries} delivery updates`);
  return totals;
}
