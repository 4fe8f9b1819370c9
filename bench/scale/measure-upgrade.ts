// bench:scale (g), issue 25 point 6: an online upgrade on the history database, the one this release ships: each of
// its migrations that does work on the large tables, redone while the service takes triggers at a fixed rate. The
// database is first put back as the release before it left it (each step's `undo`, newest first, and their
// _prisma_migrations rows deleted); then the project's runner (src/storage/migrate.ts, as `callctl migrate` and the
// server's start run it) applies them one at a time (a directory of the migrations up to each), so that each step has
// its time and the triggers sent while it ran. Then a new release's start on that database: a second service process,
// from spawn to /health/ready, with nothing to apply. The service under load is this release's; the steps it cannot
// run without are not redone: the columns it reads and writes (20261128210000, accounts.first_call_at with its
// trigger and fill: a lock on calls while each account's oldest call is found, one index descent per account;
// 20261128220000, webhook_deliveries.last_failure_at: no rewrite, a moment's lock; 20261129100000, calls.agency_id
// and its trigger: no rewrite, a moment's lock; its fill, 20261129100001, is redone).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { migrate } from '../../src/storage/migrate.js';
import type { Child } from '../processes.js';
import { wallNow } from '../load.js';
import { percentiles, type Percentiles } from '../stats.js';
import { chainsText, LockSampler, type LockWaits } from './lock-sampler.js';
import { round } from './measure-drain.js';
import { acceptedSoFar, fixedRateTriggers, splitByTime } from './measure-service.js';

const MIGRATIONS = path.join(import.meta.dirname, '../../prisma/migrations');

/** A migration of this release redone under load: what it does, and how the release before left the database. */
export interface UpgradeStep {
  migration: string;
  what: string;
  /** Statements that put the database back as the release before left it (run before the load, in order). */
  undo: string[];
  /** An index the step builds: its size is reported. */
  builds?: string;
}

/** This release's steps on the large tables, in the order the runner applies them. */
export const UPGRADE_STEPS: UpgradeStep[] = [
  {
    migration: '20261128100000_call_outcome_days',
    what: "the Overview's outcome counters: a lock on calls while the calls ended since yesterday are counted, triggers",
    undo: [
      ...['insert', 'update', 'delete', 'truncate'].map(
        (op) => `DROP TRIGGER IF EXISTS "calls_waiting_then_outcomes_after_${op}" ON "calls"`,
      ),
      ...['after_insert', 'after_update', 'after_delete', 'after_truncate'].map(
        (op) => `DROP FUNCTION IF EXISTS "oct_calls_outcomes_${op}"()`,
      ),
      'DROP FUNCTION IF EXISTS "oct_add_call_outcomes"(jsonb)',
      'DROP FUNCTION IF EXISTS "oct_outcomes_since"()',
      'DROP TABLE IF EXISTS "call_outcome_days"',
    ],
  },
  {
    migration: '20261128200000_calls_waiting_by_not_before_index',
    what: "`CREATE INDEX CONCURRENTLY` of the Overview's plain waiting calls (partial: it reads all of calls)",
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "calls_waiting_by_not_before"'],
    builds: 'calls_waiting_by_not_before',
  },
  {
    migration: '20261128200001_calls_waiting_scheduled_or_retry_index',
    what: "`CREATE INDEX CONCURRENTLY` of the Overview's scheduled and retry-waiting calls (partial)",
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "calls_waiting_scheduled_or_retry"'],
    builds: 'calls_waiting_scheduled_or_retry',
  },
  {
    migration: '20261128200002_drop_calls_account_id_ended_at_index',
    what: '`DROP INDEX CONCURRENTLY` of (account_id, ended_at), which nothing reads since the outcome counters',
    // Built again as the release before had it (its first migration built it in a transaction, on an empty table).
    undo: [
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_id_ended_at_idx" ON "calls"("account_id", "ended_at")',
    ],
  },
  {
    migration: '20261128220001_delivery_last_failure_filled',
    what: 'last_failure_at filled for the failures of the last day (one pass over webhook_attempts)',
    undo: ['UPDATE "webhook_deliveries" SET "last_failure_at" = NULL WHERE "last_failure_at" IS NOT NULL'],
  },
  {
    migration: '20261128220002_delivery_failures_index',
    what: '`CREATE INDEX CONCURRENTLY` of the failed deliveries (partial: it scans the whole table, keeps few entries)',
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "webhook_deliveries_endpoint_id_last_failure_at_idx"'],
    builds: 'webhook_deliveries_endpoint_id_last_failure_at_idx',
  },
  {
    migration: '20261129010000_calls_waiting_due_index',
    what: "`CREATE INDEX CONCURRENTLY` of the waiting calls by (account_id, not_before): the dispatcher's due accounts",
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "calls_waiting_due"'],
    builds: 'calls_waiting_due',
  },
  {
    migration: '20261129010001_drop_calls_waiting_by_not_before_index',
    what: '`DROP INDEX CONCURRENTLY` of the plain waiting calls by (account_id, not_before), now in calls_waiting_due',
    // Built again as the release before had it (migration 20261128200000).
    undo: [
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_waiting_by_not_before" ON "calls" ("account_id", "not_before") WHERE "status" = \'initiated\' AND "next_attempt_at" IS NULL AND "scheduled_at" IS NULL',
    ],
  },
  {
    migration: '20261129100001_calls_agency_id_filled',
    what: 'calls.agency_id of every call written before, in batches of 5,000 committed one by one (one pass over calls)',
    // As the release before left them: none (the column and its trigger, 20261129100000, stay: the service writes them).
    undo: ['UPDATE "calls" SET "agency_id" = NULL WHERE "agency_id" IS NOT NULL'],
  },
  {
    migration: '20261129100002_calls_agency_created_index',
    what: "`CREATE INDEX CONCURRENTLY` of an agency's calls by (agency_id, created_at, id): its Calls list",
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "calls_agency_id_created_at_id_idx"'],
    builds: 'calls_agency_id_created_at_id_idx',
  },
  {
    migration: '20261129100003_calls_agency_name_index',
    what: "`CREATE INDEX CONCURRENTLY` of an agency's named calls by (agency_id, lower(name), created_at, id): its name search",
    undo: ['DROP INDEX CONCURRENTLY IF EXISTS "calls_agency_id_name_newest_idx"'],
    builds: 'calls_agency_id_name_newest_idx',
  },
  {
    migration: '20261129300000_call_outcome_days_agency_id',
    what: "the outcome counters' agency: the column, its trigger, the counters filled, the index (one transaction)",
    // Undone with the counters themselves (20261128100000's undo drops the table, its trigger and its functions),
    // which the steps above build again as the release before had them.
    undo: [],
  },
];

export interface UpgradeStepFigures {
  migration: string;
  what: string;
  seconds: number;
  /** Triggers sent while it ran. */
  during: Percentiles;
  /** The size of the index it built. */
  indexBytes: number | null;
  /** Lock waits while it ran (bench/scale/lock-sampler.ts): its samples and the most sampled chains, "waiter <- blockers". */
  lockWaits: LockWaits;
}

export interface UpgradeFigures {
  steps: UpgradeStepFigures[];
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

/** The size of the index `step` built, which must be valid. */
async function builtIndexBytes(db: pg.Client, step: UpgradeStep): Promise<number> {
  const {
    rows: [index],
  } = await db.query<{ valid: boolean; bytes: string }>(
    `SELECT i.indisvalid AS valid, pg_relation_size(i.indexrelid) AS bytes FROM pg_index i
      WHERE i.indexrelid = to_regclass($1::text)`,
    [step.builds],
  );
  if (!index?.valid) throw new Error(`upgrade: ${step.builds} is missing or not valid after ${step.migration}`);
  return Number(index.bytes);
}

/** A directory holding copies of the migrations up to `last`: the runner applies those alone (it reads directories, not links). */
function migrationsUpTo(last: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-upgrade-'));
  for (const name of fs.readdirSync(MIGRATIONS).filter((n) => n <= last && !n.includes('.')))
    fs.cpSync(path.join(MIGRATIONS, name), path.join(dir, name), { recursive: true });
  return dir;
}

export async function measureUpgrade(ctx: UpgradeContext): Promise<UpgradeFigures> {
  for (const step of [...UPGRADE_STEPS].reverse()) for (const sql of step.undo) await ctx.db.query(sql);
  await ctx.db.query('DELETE FROM "_prisma_migrations" WHERE migration_name = ANY($1::text[])', [
    UPGRADE_STEPS.map((s) => s.migration),
  ]);
  const before = await acceptedSoFar(ctx.internalPort);
  const load = fixedRateTriggers(ctx.port, ctx.keys, ctx.rate, ctx.loadSeconds, { recordCalls: true });
  for (const deadline = performance.now() + 15_000; performance.now() < deadline;) {
    if ((await acceptedSoFar(ctx.internalPort)) - before >= 10) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, ctx.leadSeconds * 1000));
  const from = wallNow();
  const windows: { step: UpgradeStep; from: number; to: number; lockWaits: LockWaits; indexBytes: number | null }[] =
    [];
  const applied: string[] = [];
  const locks = new LockSampler(ctx.databaseUrl);
  await locks.start();
  try {
    for (const step of UPGRADE_STEPS) {
      const dir = migrationsUpTo(step.migration);
      const stepFrom = wallNow();
      locks.take(0); // what was sampled before this step is not its own
      try {
        const { applied: now } = await migrate(ctx.databaseUrl, dir);
        if (now.join() !== step.migration)
          throw new Error(`upgrade: ${step.migration} applied ${now.join(', ') || 'nothing'}`);
        applied.push(...now);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const to = wallNow();
      const lockWaits = locks.take(6);
      // Read now: a later step may drop it (calls_waiting_by_not_before, replaced by calls_waiting_due).
      const indexBytes = step.builds ? await builtIndexBytes(ctx.db, step) : null;
      windows.push({ step, from: stepFrom, to, lockWaits, indexBytes });
      ctx.log(`upgrade: ${step.migration} lock waits over ${lockWaits.samples} samples: ${chainsText(lockWaits)}`);
    }
  } finally {
    await locks.stop();
  }
  const lastFrom = wallNow();
  applied.push(...(await migrate(ctx.databaseUrl)).applied);
  const to = wallNow();
  ctx.log(
    `upgrade: steps ${windows.map((w) => `${round((w.from - from) / 1000, 2)}-${round((w.to - from) / 1000, 2)}`).join(', ')}; the rest ${round((lastFrom - from) / 1000, 2)}-${round((to - from) / 1000, 2)} s`,
  );
  ctx.log(`upgrade: ${applied.join(', ') || 'nothing'} applied in ${round((to - from) / 1000, 2)} s`);
  const triggers = await load;
  const missing = UPGRADE_STEPS.filter((s) => !applied.includes(s.migration));
  const extra = applied.filter((name) => !UPGRADE_STEPS.some((s) => s.migration === name));
  if (missing.length > 0 || extra.length > 0)
    throw new Error(
      `upgrade: the runner applied ${applied.join(', ')}; expected ${UPGRADE_STEPS.map((s) => s.migration).join(', ')}`,
    );
  const steps: UpgradeStepFigures[] = [];
  for (const { step, from: stepFrom, to: stepTo, lockWaits, indexBytes } of windows) {
    steps.push({
      migration: step.migration,
      what: step.what,
      seconds: round((stepTo - stepFrom) / 1000, 2),
      during: percentiles(splitByTime(triggers, stepFrom, stepTo).inside),
      indexBytes,
      lockWaits,
    });
  }
  const loadEnd = Math.max(...(triggers.calls ?? []).map(([, due]) => due), from);

  const noOpStarted = performance.now();
  await migrate(ctx.databaseUrl);
  const noOpMigrateSeconds = round((performance.now() - noOpStarted) / 1000, 2);
  const restartStarted = performance.now();
  const release = await ctx.startRelease();
  const restartSeconds = round((performance.now() - restartStarted) / 1000, 2);
  await release.stop();
  return {
    steps,
    applied,
    seconds: round((to - from) / 1000, 2),
    rate: ctx.rate,
    during: percentiles(splitByTime(triggers, from, to).inside),
    statuses: triggers.statuses,
    errors: triggers.errors + triggers.timeouts,
    uncoveredSeconds: round(Math.max(0, to - loadEnd) / 1000, 1),
    restartSeconds,
    noOpMigrateSeconds,
  };
}
