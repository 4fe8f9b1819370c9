// The databases of `npm run bench:scale` (issue 25 point 3): the base every one of them has (the few accounts whose
// keys the load uses, their endpoints and the dashboard user: BASE), alone ("empty") or with one dimension on it:
// history (5 million finished calls with their events, 2 million webhook deliveries with their attempts, skewed over
// the accounts and growing over the year, then churned and trimmed as the service would: data-history.ts), tenants
// (10,000 more accounts in agencies of up to 1,000 clients, the dashboard's agency the largest: data-tenants.ts) or
// queue (100,000 calls waiting, none due during the run). No VACUUM or ANALYZE: the build waits for autovacuum
// (bench/autovacuum.ts). Bulk sessions, indexes and constraints: data-sessions.ts.
// `npx tsx bench/scale/data.ts <dimension> [factor]` builds one on a fresh database (of the embedded PostgreSQL, or
// BENCH_DATABASE_URL's server), prints counts and times, and drops it unless BENCH_KEEP=1 (on BENCH_DATABASE_URL).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { retentionPolicy, runRetentionPass } from '../../src/jobs/retention.js';
import { loadConfig } from '../../src/config.js';
import { createRetentionPool, RetentionRepository } from '../../src/storage/retention.js';
import { FILTER_MENU_MAX } from '../../src/views/pages/calls-filters.js';
import { OVERVIEW_CLIENTS_MAX } from '../../src/routes/dashboard/overview.js';
import { awaitAutovacuum } from '../autovacuum.js';
import { benchPostgres } from '../database.js';
import { connect, freshDatabase } from '../setup.js';
import { HISTORY_DAYS, historyStatements, planHistory, runChunk, type ChunkCounts } from './data-history.js';
import {
  backendCpuSeconds,
  churn,
  dropBulkSchema,
  openSession,
  rebuildBulkSchema,
  restoreForeignKeys,
  spread,
} from './data-sessions.js';
import {
  createDashboardUser,
  createRowIdFunction,
  dashboardEmail,
  DASHBOARD_PASSWORD,
  dropRowIdFunction,
  insertClientCalls,
  insertQueue,
  insertSearchedNames,
  insertTenants,
  planLayout,
  type BaseShape,
  type Layout,
} from './data-tenants.js';

/** The dimensions, each scaled by BENCH_SCALE_FACTOR. */
export interface ScaleShape {
  finishedCalls: number; // history: 5,000,000 finished calls, each with its events
  bigAccountCalls: number; // history: 1,000,000 of them the dashboard's account's
  deliveries: number; // history: 2,000,000 webhook deliveries (the last 32 days' calls of the endpoint accounts) with their attempts
  tenantAccounts: number; // tenants: 10,000 accounts added
  largestAgency: number; // tenants: the dashboard's agency grown to 1,000 clients (the next agencies 1,000 / k)
  waitingCalls: number; // queue: 100,000 calls waiting (for a window or a time that is not during the run)
}

export const FULL_SHAPE: ScaleShape = {
  finishedCalls: 5_000_000,
  bigAccountCalls: 1_000_000,
  deliveries: 2_000_000,
  tenantAccounts: 10_000,
  largestAgency: 1_000,
  waitingCalls: 100_000,
};

/**
 * What every database has, at every scale factor: what the measurements need to run. The dashboard's agency has
 * more clients than the Calls list's filter menus list and the Overview shows (dashboardClients), so that its pages
 * take the form they take for the tenants dimension's agency of a thousand: the same 51 rows of the Overview, no
 * client or agent menu on the Calls list. With four clients, the empty database's Overview rendered 5 rows where the
 * tenants' rendered 51 (12 against 74 KB), and its ratio measured the page's length: the same empty database with
 * the agency given 46 more clients served the same 51 rows within 1.08-1.23x of the tenants' (2026-11-30, `2a78342`).
 */
export const BASE: BaseShape = {
  agencies: 40,
  clientsPerAgency: 4,
  dashboardClients: Math.max(FILTER_MENU_MAX, OVERVIEW_CLIENTS_MAX) + 1,
  keys: 200,
  endpoints: 20,
  timingOut: 2,
  drainAccounts: 200,
};

export const DIMENSIONS = ['empty', 'history', 'tenants', 'queue'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** FULL_SHAPE with every count multiplied by factor (at least 1); for quick iterations (e.g. 0.02). */
export function scaledShape(factor: number): ScaleShape {
  return Object.fromEntries(
    Object.entries(FULL_SHAPE).map(([key, value]: [string, number]) => [key, Math.max(1, Math.round(value * factor))]),
  ) as unknown as ScaleShape;
}

export interface ScaleData {
  dimension: Dimension;
  layout: Layout;
  keyed: { accountId: string; key: string }[]; // the `keys` accounts with their plaintext keys
  bigAccount: { accountId: string; email: string; password: string; deepCursorCreatedAt: string }; // a dashboard user (can sign in, sees the big account's calls) and a created_at deep in its history
  endpointAccounts: { healthy: string[]; timingOut: string[] };
  counts: Record<string, number>; // rows per table after the build, from count(*) or pg_class estimates
  buildSeconds: number;
  /** Bytes per table (pg_total_relation_size: heap, indexes and TOAST). */
  sizes: Record<string, number>;
  /** Dead row versions per table when the build ended, before the wait for autovacuum. */
  deadRows: Record<string, number>;
  /** Seconds per build phase. */
  phases: Record<string, number>;
  autovacuum: { caughtUp: boolean; seconds: number; text: string };
}

/** Calls per window of the history: about 4 million rows of calls, events and deliveries per statement. */
const CHUNK_CALLS = 500_000;
/** Sessions working side by side (the machine has 2 cores). */
const SESSIONS = 2;
/** The churn: the calls and deliveries of the last CHURN_DAYS are updated as the service updates them. */
const CHURN_DAYS = 30;
/** The slice a past retention deleted: calls older than this (CALL_RETENTION_DAYS + 5) and deliveries older than 31 days. */
const TRIMMED_CALL_DAYS = HISTORY_DAYS - 5;
const TRIMMED_DELIVERY_DAYS = 31;

/**
 * Builds one database on an already migrated one (the runner creates it with freshDatabase from bench/setup.ts): the
 * base, its dimension, then the wait for autovacuum (at most autovacuumMaxMs).
 */
export async function buildScaleData(
  databaseUrl: string,
  options: {
    shape: ScaleShape;
    dimension: Dimension;
    receiverUrl: string;
    stallUrl: string;
    autovacuumMaxMs: number;
    log: (line: string) => void;
  },
): Promise<ScaleData> {
  const { shape, log, dimension } = options;
  const started = performance.now();
  const phases: Record<string, number> = {};
  const now = new Date();
  const layout = planLayout(
    BASE,
    dimension === 'tenants' ? { accounts: shape.tenantAccounts, largestAgency: shape.largestAgency } : null,
    dimension === 'queue',
  );
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, () => openSession(databaseUrl, { replica: true })),
  );
  const main = await openSession(databaseUrl);
  let mark = performance.now();
  let cpuMark = 0;
  const phase = async (name: string) => {
    const at = performance.now();
    const cpu = await backendCpuSeconds([main, ...sessions]);
    phases[name] = Math.round((at - mark) / 100) / 10;
    log(
      `${name}: ${phases[name]} s (database CPU ${(cpu - cpuMark).toFixed(1)} s, load ${os.loadavg()[0]!.toFixed(1)})`,
    );
    mark = at;
    cpuMark = cpu;
  };
  try {
    await createRowIdFunction(main);
    const keys = await insertTenants(main, layout, options, now);
    const email = dashboardEmail();
    await createDashboardUser(databaseUrl, layout.accountIds[layout.big]!, email);
    await phase(`${layout.accountIds.length} accounts`);
    await phase(`${await insertSearchedNames(main, layout, BASE, now)} calls with the searched names`);
    if (dimension === 'tenants')
      await phase(`${await insertClientCalls(main, layout, BASE, now)} calls of the dashboard agency's clients`);
    if (dimension === 'queue') {
      await insertQueue(main, layout, shape.waitingCalls, now);
      await phase(`${shape.waitingCalls} waiting calls`);
    }
    if (dimension === 'history') await buildHistory(databaseUrl, { shape, layout, main, sessions, now, phase, log });
    await dropRowIdFunction(main);
    await checkWaitingCounts(main);
    await checkOutcomeCounts(main);
    const deadRows = await deadRowsOf(main);
    await Promise.all([main, ...sessions].map((s) => s.end()));
    log(`waiting for autovacuum (dead rows: ${JSON.stringify(deadRows)})`);
    const db = await connect(databaseUrl);
    try {
      const autovacuum = await awaitAutovacuum(db, { maxMs: options.autovacuumMaxMs, log });
      log(autovacuum.text);
      phases.autovacuum = autovacuum.seconds;
      const bigAccountId = layout.accountIds[layout.big]!;
      // A created_at 90% of the way down the big account's calls (none on the other databases: the deep page is then
      // the same request on an empty list).
      const {
        rows: [big],
      } = await db.query<{ deep: Date | null }>(
        `SELECT (SELECT created_at FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC
                  OFFSET (SELECT count(*) * 9 / 10 FROM calls WHERE account_id = $1) LIMIT 1) AS deep`,
        [bigAccountId],
      );
      const { counts, sizes } = await tableFacts(db);
      return {
        dimension,
        layout,
        keyed: layout.keyed.map((n) => ({ accountId: layout.accountIds[n]!, key: keys.get(n)! })),
        bigAccount: {
          accountId: bigAccountId,
          email,
          password: DASHBOARD_PASSWORD,
          deepCursorCreatedAt: (big!.deep ?? now).toISOString(),
        },
        endpointAccounts: {
          healthy: layout.healthy.map((n) => layout.accountIds[n]!),
          timingOut: layout.timingOut.map((n) => layout.accountIds[n]!),
        },
        counts,
        sizes,
        deadRows,
        phases,
        autovacuum: { caughtUp: autovacuum.caughtUp, seconds: autovacuum.seconds, text: autovacuum.text },
        buildSeconds: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await db.end();
    }
  } finally {
    await Promise.all([main, ...sessions].map((s) => s.end().catch(() => undefined)));
  }
}

type Session = Awaited<ReturnType<typeof openSession>>;

/**
 * The history: written without indexes (the bulk load), the indexes and keys made again, then the churn with every
 * index in place (the last CHURN_DAYS' calls updated twice, as dialling and ending update them, and their deliveries
 * once, as the sender marks them), then the oldest slice deleted by the service's own retention pass (unbounded, as
 * `callctl retention run`), so that the tables carry dead rows and the indexes their churn, as a deployment's do.
 */
async function buildHistory(
  databaseUrl: string,
  ctx: {
    shape: ScaleShape;
    layout: Layout;
    main: Session;
    sessions: Session[];
    now: Date;
    phase: (name: string) => Promise<void>;
    log: (line: string) => void;
  },
): Promise<void> {
  const { shape, layout, main, sessions, now, phase, log } = ctx;
  const { rows: endpoints } = await main.query<{ accountId: string; endpointId: string }>(
    'SELECT account_id AS "accountId", id AS "endpointId" FROM webhook_endpoints',
  );
  const plan = planHistory(shape, layout.accountIds.length, endpoints.length, CHUNK_CALLS);
  log(
    `history: ${shape.finishedCalls} calls (${plan.big} of the big account, ${plan.recent} recent ones of endpoint accounts) in ${plan.chunks.length} windows`,
  );
  const dropped = await dropBulkSchema(main);
  await phase(`dropped ${dropped.indexes.length} indexes and ${dropped.foreignKeys.length} foreign keys`);
  const total: ChunkCounts = { calls: 0, events: 0, deliveries: 0, attempts: 0 };
  await spread(sessions, historyStatements(plan, { layout, endpoints, now }), async (db, statement, i) => {
    const counts = await runChunk(db, statement);
    for (const key of Object.keys(total) as (keyof ChunkCounts)[]) total[key] += counts[key];
    log(
      `  window ${i + 1}/${plan.chunks.length}: ${counts.calls} calls, ${counts.events} events, ${counts.deliveries} deliveries (${total.calls} calls so far)`,
    );
  });
  await phase(
    `history: ${total.calls} calls, ${total.events} events, ${total.deliveries} deliveries, ${total.attempts} attempts`,
  );
  await rebuildBulkSchema(sessions, dropped, log);
  await phase('indexes and primary keys');
  await insertIdempotencyRecords(
    main,
    layout.keyed.map((n) => layout.accountIds[n]!),
    now,
  );
  await restoreForeignKeys(sessions, dropped, log);
  await phase('idempotency records, foreign keys');
  const churned = await churn(sessions, { now, days: CHURN_DAYS, log });
  await phase(`churn: ${churned.calls} call updates, ${churned.deliveries} delivery updates`);
  const config = loadConfig({ DATABASE_URL: databaseUrl });
  const pool = createRetentionPool(databaseUrl);
  try {
    const pass = await runRetentionPass({
      retention: new RetentionRepository(pool),
      now,
      policy: { ...retentionPolicy(config), callDays: TRIMMED_CALL_DAYS, webhookLogDays: TRIMMED_DELIVERY_DAYS },
      batchSize: config.RETENTION_BATCH_SIZE,
      pauseMs: 0,
    });
    await phase(`retention of the oldest slice: ${JSON.stringify(pass.deleted)}`);
  } finally {
    await pool.end();
  }
  // The bulk sessions bypassed the triggers that count the outcomes of today's and yesterday's calls: counted here as
  // they would have (the migration's own first count).
  await main.query(`
    INSERT INTO call_outcome_days (account_id, day, outcome, calls)
    SELECT account_id, (ended_at AT TIME ZONE 'UTC')::date, coalesce(failure_reason::text, status::text), count(*)::int
      FROM calls WHERE status IN ('completed', 'failed') AND ended_at >= oct_outcomes_since()
     GROUP BY 1, 2, 3
    ON CONFLICT (account_id, day, outcome) DO UPDATE SET calls = excluded.calls`);
  await phase("today's and yesterday's outcomes counted");
  // And the trigger that keeps each account's first call's time (20261128210000): set here as the migration does, one
  // descent of the (account_id, created_at, id) index per account.
  await main.query(`
    UPDATE accounts a SET first_call_at = f.at
      FROM (SELECT x.id, (SELECT min(c.created_at) FROM calls c WHERE c.account_id = x.id) AS at FROM accounts x) f
     WHERE a.id = f.id AND f.at IS DISTINCT FROM a.first_call_at`);
  await phase('first calls noted');
}

/**
 * Idempotency-Key records as the trigger route leaves them, for the keyed accounts' calls of the last 25 hours (one in
 * two): kept 24 h, so the oldest are past their expiry and a retention pass deletes them.
 */
async function insertIdempotencyRecords(
  db: Awaited<ReturnType<typeof openSession>>,
  keyed: string[],
  now: Date,
): Promise<void> {
  await db.query(
    `
    INSERT INTO idempotency_records (id, account_id, key, request_hash, response_status, response_body, created_at, expires_at)
    SELECT gen_random_uuid(), c.account_id, 'crm-' || c.id, encode(sha256(convert_to(c.phone_number || c.metadata::text, 'UTF8')), 'hex'),
           200, jsonb_build_object('success', true, 'call_id', c.id, 'status', 'initiated'), c.created_at, c.created_at + interval '24 hours'
      FROM calls c
     WHERE c.account_id = ANY($1::uuid[]) AND c.created_at >= $2::timestamptz - interval '25 hours' AND abs(hashtext(c.id::text)) % 2 = 0`,
    [keyed, now],
  );
}

/** accounts.waiting_calls must equal each account's calls in status initiated (the triggers keep it; the history bypassed them). */
async function checkWaitingCounts(db: Awaited<ReturnType<typeof openSession>>): Promise<void> {
  const { rows } = await db.query<{ wrong: number }>(`
    SELECT count(*)::int AS wrong FROM accounts a
      LEFT JOIN (SELECT account_id, count(*)::int AS n FROM calls WHERE status = 'initiated' GROUP BY account_id) w ON w.account_id = a.id
     WHERE a.waiting_calls <> coalesce(w.n, 0)`);
  if (rows[0]!.wrong > 0) throw new Error(`accounts.waiting_calls is wrong for ${rows[0]!.wrong} accounts`);
}

/** call_outcome_days must hold each account's calls that ended today and yesterday by outcome (the triggers keep it). */
async function checkOutcomeCounts(db: Awaited<ReturnType<typeof openSession>>): Promise<void> {
  const { rows } = await db.query<{ wrong: number }>(`
    WITH counted AS (
      SELECT account_id, (ended_at AT TIME ZONE 'UTC')::date AS day, coalesce(failure_reason::text, status::text) AS outcome,
             count(*)::int AS calls
        FROM calls WHERE status IN ('completed', 'failed') AND ended_at >= oct_outcomes_since() GROUP BY 1, 2, 3)
    SELECT count(*)::int AS wrong FROM counted c
      FULL JOIN (SELECT * FROM call_outcome_days WHERE day >= (oct_outcomes_since() AT TIME ZONE 'UTC')::date) o
             USING (account_id, day, outcome)
     WHERE c.calls IS DISTINCT FROM o.calls`);
  if (rows[0]!.wrong > 0)
    throw new Error(`call_outcome_days is wrong for ${rows[0]!.wrong} accounts, days and outcomes`);
}

/** Dead row versions per table (pg_stat_user_tables), those with any. */
async function deadRowsOf(db: Session): Promise<Record<string, number>> {
  const { rows } = await db.query<{ name: string; dead: string }>(
    `SELECT relname AS name, n_dead_tup AS dead FROM pg_stat_user_tables WHERE schemaname = current_schema() AND n_dead_tup > 0 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.dead)]));
}

/** Rows per table (exact up to a million, pg_class's estimate after autovacuum's analyze above) and bytes on disk. */
async function tableFacts(
  db: Awaited<ReturnType<typeof connect>>,
): Promise<{ counts: Record<string, number>; sizes: Record<string, number> }> {
  const { rows } = await db.query<{ name: string; estimate: string; size: string }>(`
    SELECT c.relname AS name, c.reltuples::bigint AS estimate, pg_total_relation_size(c.oid) AS size FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname <> '_prisma_migrations' ORDER BY c.relname`);
  const counts: Record<string, number> = {};
  const sizes: Record<string, number> = {};
  for (const row of rows) {
    counts[row.name] =
      Number(row.estimate) > 1_000_000
        ? Number(row.estimate)
        : (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${row.name}"`)).rows[0]!.n;
    sizes[row.name] = Number(row.size);
  }
  return { counts, sizes };
}

async function main() {
  const dimension = (process.argv[2] ?? 'history') as Dimension;
  if (!DIMENSIONS.includes(dimension)) throw new Error(`dimension must be one of ${DIMENSIONS.join(', ')}`);
  const factor = Number(process.argv[3] ?? 1);
  if (!(factor > 0)) throw new Error(`factor must be a positive number, not ${process.argv[3]}`);
  const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
  const postgres = await benchPostgres(log);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void postgres.stop().finally(() => process.exit(130)));
  try {
    await buildOne(postgres.adminUrl, dimension, factor, log);
  } finally {
    await postgres.stop();
  }
}

async function buildOne(adminUrl: string, dimension: Dimension, factor: number, log: (line: string) => void) {
  const database = await freshDatabase(adminUrl, `scale_${dimension}`);
  log(`database ${database.name}, ${dimension}, factor ${factor}`);
  try {
    const data = await buildScaleData(database.url, {
      shape: scaledShape(factor),
      dimension,
      log,
      receiverUrl: 'http://127.0.0.1:9/receiver',
      stallUrl: 'http://127.0.0.1:9/stall',
      autovacuumMaxMs: 30 * 60_000,
    });
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
    for (const table of Object.keys(data.counts)) {
      process.stdout.write(
        `${table.padEnd(22)} ${String(data.counts[table]).padStart(10)} rows ${mb(data.sizes[table]!).padStart(9)}\n`,
      );
    }
    process.stdout.write(`built in ${data.buildSeconds} s: ${JSON.stringify(data.phases)}\n`);
  } finally {
    if (process.env.BENCH_KEEP === '1') log(`kept ${database.name} (${database.url})`);
    else await database.drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
