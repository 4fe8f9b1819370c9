// bench:scale (g), issue 25 point 6: an online upgrade on the history database, the one this release ships: the
// name index rebuilt in its new order (20261128010000-02: the new index built CONCURRENTLY, the old one dropped
// CONCURRENTLY, the new one renamed). The database is first put back as the release before it left it (the old
// index, built as its own migration 20261125020002 builds it, and the three migrations' _prisma_migrations rows
// deleted), then the project's runner (src/storage/migrate.ts, as `callctl migrate` and the server's start run it)
// applies them while the service takes triggers at a fixed rate: the migrations' time, and the triggers sent while
// they ran. Then a new release's start on that database: a second service process, from spawn to /health/ready,
// with nothing to apply.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { migrate } from '../../src/storage/migrate.js';
import type { Child } from '../processes.js';
import { wallNow } from '../load.js';
import { percentiles, type Percentiles } from '../stats.js';
import { round } from './measure-drain.js';
import { acceptedSoFar, fixedRateTriggers, splitByTime } from './measure-service.js';

/** The migrations redone: the name index in its new order, built, swapped for the old one and renamed, online. */
export const UPGRADE_MIGRATIONS = [
  '20261128010000_calls_name_newest_index',
  '20261128010001_drop_calls_name_prefix_index',
  '20261128010002_calls_name_newest_index_rename',
];
/** The migration that built the index the upgrade replaces (run again to put the database back as it was). */
const PREVIOUS_MIGRATION = '20261125020002_calls_name_prefix_index';
const UPGRADE_INDEX = 'calls_account_id_name_prefix_idx';

export interface UpgradeFigures {
  migration: string;
  index: string;
  applied: string[];
  seconds: number;
  rate: number;
  /** Triggers sent while the migration ran. */
  during: Percentiles;
  /** Status counts of the whole load (before, during and after the migration). */
  statuses: Record<string, number>;
  errors: number;
  /** Seconds of the migration the load did not cover (0: it outlasted the migration). */
  uncoveredSeconds: number;
  indexBytes: number;
  /** A new release's process: spawn to ready (migrations with nothing to apply, then the service's start). */
  restartSeconds: number;
  /** The runner alone with nothing to apply. */
  noOpMigrateSeconds: number;
}

export interface UpgradeContext {
  db: pg.Client;
  databaseUrl: string;
  port: number;
  internalPort: number;
  keys: string[];
  rate: number;
  /** The load lasts this long; the migration starts leadSeconds into it. */
  loadSeconds: number;
  leadSeconds: number;
  /** Starts another service process on the database (the new release) and returns it once ready. */
  startRelease(): Promise<Child>;
  log(line: string): void;
}

export async function measureUpgrade(ctx: UpgradeContext): Promise<UpgradeFigures> {
  const previous = fs.readFileSync(
    path.join(import.meta.dirname, '../../prisma/migrations', PREVIOUS_MIGRATION, 'migration.sql'),
    'utf8',
  );
  await ctx.db.query(`DROP INDEX CONCURRENTLY IF EXISTS "${UPGRADE_INDEX}"`);
  await ctx.db.query(previous);
  await ctx.db.query('DELETE FROM "_prisma_migrations" WHERE migration_name = ANY($1::text[])', [UPGRADE_MIGRATIONS]);
  const before = await acceptedSoFar(ctx.internalPort);
  const load = fixedRateTriggers(ctx.port, ctx.keys, ctx.rate, ctx.loadSeconds, { recordCalls: true });
  for (const deadline = performance.now() + 15_000; performance.now() < deadline;) {
    if ((await acceptedSoFar(ctx.internalPort)) - before >= 10) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, ctx.leadSeconds * 1000));
  const from = wallNow();
  const result = await migrate(ctx.databaseUrl);
  const to = wallNow();
  ctx.log(`upgrade: ${result.applied.join(', ') || 'nothing'} applied in ${round((to - from) / 1000, 2)} s`);
  const triggers = await load;
  for (const migration of UPGRADE_MIGRATIONS)
    if (!result.applied.includes(migration))
      throw new Error(`upgrade: the runner did not apply ${migration} (${result.applied.join(', ')})`);
  const {
    rows: [index],
  } = await ctx.db.query<{ valid: boolean; bytes: string; definition: string }>(
    `SELECT i.indisvalid AS valid, pg_relation_size(i.indexrelid) AS bytes, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i WHERE i.indexrelid = $1::regclass`,
    [UPGRADE_INDEX],
  );
  if (!index?.valid) throw new Error(`upgrade: ${UPGRADE_INDEX} is not valid after the migration`);
  if (!index.definition.includes('created_at, id) INCLUDE'))
    throw new Error(`upgrade: ${UPGRADE_INDEX} is not the new index after the migration: ${index.definition}`);
  const loadEnd = Math.max(...(triggers.calls ?? []).map(([, due]) => due), from);

  const noOpStarted = performance.now();
  await migrate(ctx.databaseUrl);
  const noOpMigrateSeconds = round((performance.now() - noOpStarted) / 1000, 2);
  const restartStarted = performance.now();
  const release = await ctx.startRelease();
  const restartSeconds = round((performance.now() - restartStarted) / 1000, 2);
  await release.stop();
  return {
    migration: UPGRADE_MIGRATIONS.join(', '),
    index: UPGRADE_INDEX,
    applied: result.applied,
    seconds: round((to - from) / 1000, 2),
    rate: ctx.rate,
    during: percentiles(splitByTime(triggers, from, to).inside),
    statuses: triggers.statuses,
    errors: triggers.errors + triggers.timeouts,
    uncoveredSeconds: round(Math.max(0, to - loadEnd) / 1000, 1),
    indexBytes: Number(index.bytes),
    restartSeconds,
    noOpMigrateSeconds,
  };
}
