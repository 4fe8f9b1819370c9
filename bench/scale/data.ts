// The large database of `npm run bench:scale` (issue 16.2): 10,000 accounts with keys, endpoints and a dashboard user,
// 100,000 waiting calls (some for a calling window that opens during the run) and a year of history (5 million
// finished calls with their events, 2 million webhook deliveries with their attempts), written set-based in a few
// minutes; the runner (bench/scale/run.ts) calls buildScaleData and scheduleWindow. Tenants: data-tenants.ts; history:
// data-history.ts; bulk sessions, indexes and constraints: data-sessions.ts.
// `npx tsx bench/scale/data.ts [factor]` builds it at that scale on a fresh database, prints counts and time, and drops
// the database unless BENCH_KEEP=1.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DateTime } from 'luxon';
import { connect, freshDatabase } from '../setup.js';
import { historyStatements, planHistory, runChunk, type ChunkCounts } from './data-history.js';
import {
  backendCpuSeconds,
  BULK_TABLES,
  dropBulkSchema,
  openSession,
  rebuildBulkSchema,
  restoreForeignKeys,
  spread,
  vacuumAnalyze,
} from './data-sessions.js';
import {
  createDashboardUser,
  createRowIdFunction,
  DASHBOARD_EMAIL,
  DASHBOARD_PASSWORD,
  dropRowIdFunction,
  insertTenants,
  insertWaitingCalls,
  planLayout,
  TTL,
  WINDOWED_ZONE,
} from './data-tenants.js';

export interface ScaleShape {
  agencies: number; // default 2_000
  clientsPerAgency: number; // default 4  -> 10,000 accounts in all, every account with one agent (its default)
  keys: number; // default 1_000 accounts with an active API key (the trigger load rotates over them)
  endpoints: number; // default 200 accounts with a webhook endpoint
  timingOut: number; // default 20 of those endpoints point at a URL that never answers (stallUrl)
  waitingDue: number; // default 80_000 calls waiting (status initiated), due now
  waitingWindowed: number; // default 20_000 calls waiting for a calling window that opens during the run
  waitingAccounts: number; // default 500: the waiting calls are spread over this many accounts (so the 10-per-account limit binds)
  finishedCalls: number; // default 5_000_000 finished calls (history), each with its events (initiated, dialing, in_progress, completed; or initiated, dialing, failed)
  bigAccountCalls: number; // default 1_000_000 of those belong to one account (the dashboard measurement)
  deliveries: number; // default 2_000_000 webhook deliveries (succeeded, for history calls of accounts with endpoints) each with its attempt(s)
  windowedAgents: number; // default 100 second agents of waiting accounts, with calling windows; the windowed calls are theirs
}

export const FULL_SHAPE: ScaleShape = {
  agencies: 2_000,
  clientsPerAgency: 4,
  keys: 1_000,
  endpoints: 200,
  timingOut: 20,
  waitingDue: 80_000,
  waitingWindowed: 20_000,
  waitingAccounts: 500,
  finishedCalls: 5_000_000,
  bigAccountCalls: 1_000_000,
  deliveries: 2_000_000,
  windowedAgents: 100,
};

/**
 * FULL_SHAPE with every count multiplied by factor (at least 1 where it was > 0); for quick iterations (e.g. 0.01).
 * clientsPerAgency is a ratio, not a count: it stays.
 */
export function scaledShape(factor: number): ScaleShape {
  const scaled = Object.fromEntries(
    Object.entries(FULL_SHAPE).map(([key, value]: [string, number]) => [
      key,
      key === 'clientsPerAgency' || value === 0 ? value : Math.max(1, Math.round(value * factor)),
    ]),
  ) as unknown as ScaleShape;
  return scaled;
}

export interface ScaleData {
  keyed: { accountId: string; key: string }[]; // the `keys` accounts with their plaintext keys
  bigAccount: { accountId: string; email: string; password: string; callId: string; deepCursorCreatedAt: string }; // a dashboard user (can sign in, sees the big account's calls), one of its call ids, and a created_at deep in its history
  endpointAccounts: { healthy: string[]; timingOut: string[] };
  windowedAgentIds: string[];
  counts: Record<string, number>; // rows per table after the build, from count(*) or pg_class estimates
  buildSeconds: number;
  /** Bytes per table (pg_total_relation_size: heap, indexes and TOAST). */
  sizes: Record<string, number>;
  /** Seconds per build phase. */
  phases: Record<string, number>;
}

/** Calls per window of the history: about 4 million rows of calls, events and deliveries per statement. */
const CHUNK_CALLS = 500_000;
/** Sessions working side by side (the machine has 2 cores). */
const SESSIONS = 2;

/**
 * Builds the data on an already migrated database (the runner creates it with freshDatabase from bench/setup.ts).
 * history=false builds the "empty database" for comparison: the same accounts, agents, keys, users, endpoints and
 * waiting calls, but no finished calls, events of them or deliveries.
 */
export async function buildScaleData(
  databaseUrl: string,
  options: { shape: ScaleShape; history: boolean; receiverUrl: string; stallUrl: string; log: (line: string) => void },
): Promise<ScaleData> {
  const { shape, log } = options;
  const started = performance.now();
  const phases: Record<string, number> = {};
  const now = new Date();
  const layout = planLayout(shape);
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
    await createDashboardUser(databaseUrl, layout.accountIds[layout.big]!);
    const waiting = { due: shape.waitingDue, windowed: shape.waitingWindowed };
    if (!options.history) {
      // With the triggers, as the acceptance writes them (a few seconds with every index in place).
      await insertWaitingCalls(main, layout, waiting, now);
      await phase(`tenants and ${waiting.due + waiting.windowed} waiting calls`);
      await vacuumAnalyze(sessions);
      await phase('VACUUM ANALYZE');
    } else {
      const { rows: endpoints } = await main.query<{ accountId: string; endpointId: string }>(
        'SELECT account_id AS "accountId", id AS "endpointId" FROM webhook_endpoints',
      );
      const plan = planHistory(shape, layout.accountIds.length, endpoints.length, CHUNK_CALLS);
      log(
        `history: ${shape.finishedCalls} calls (${plan.big} of the big account, ${plan.recent} recent ones of endpoint accounts) in ${plan.chunks.length} windows`,
      );
      const dropped = await dropBulkSchema(main);
      await phase(`tenants; dropped ${dropped.indexes.length} indexes and ${dropped.foreignKeys.length} foreign keys`);
      // Without the triggers (a replica session) and the indexes, like the history; the counters are set after.
      await insertWaitingCalls(sessions[0]!, layout, waiting, now);
      await main.query(`
        UPDATE accounts a SET waiting_calls = w.n
          FROM (SELECT account_id, count(*)::int AS n FROM calls WHERE status = 'initiated' GROUP BY account_id) w WHERE a.id = w.account_id`);
      await phase(`${waiting.due + waiting.windowed} waiting calls`);
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
      await vacuumAnalyze(sessions);
      await phase('VACUUM ANALYZE');
      await restoreForeignKeys(sessions, dropped, log);
      await phase('foreign keys');
    }
    await dropRowIdFunction(main);
    await checkWaitingCounts(main);

    const bigAccountId = layout.accountIds[layout.big]!;
    const {
      rows: [big],
    } = await main.query<{ call_id: string; deep: Date }>(
      `
      SELECT (SELECT id FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1) AS call_id,
             (SELECT created_at FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC
               OFFSET (SELECT count(*) * 9 / 10 FROM calls WHERE account_id = $1) LIMIT 1) AS deep`,
      [bigAccountId],
    );
    const { counts, sizes } = await tableFacts(main);
    return {
      keyed: layout.keyed.map((n) => ({ accountId: layout.accountIds[n]!, key: keys.get(n)! })),
      bigAccount: {
        accountId: bigAccountId,
        email: DASHBOARD_EMAIL,
        password: DASHBOARD_PASSWORD,
        callId: big!.call_id,
        deepCursorCreatedAt: (big!.deep ?? now).toISOString(),
      },
      endpointAccounts: {
        healthy: layout.healthy.map((n) => layout.accountIds[n]!),
        timingOut: layout.timingOut.map((n) => layout.accountIds[n]!),
      },
      windowedAgentIds: layout.windowed.map((w) => w.agentId),
      counts,
      sizes,
      phases,
      buildSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    await Promise.all([main, ...sessions].map((s) => s.end()));
  }
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

/** Rows per table (exact for the small ones, pg_class's estimate after VACUUM for the bulk ones) and bytes on disk. */
async function tableFacts(
  db: Awaited<ReturnType<typeof openSession>>,
): Promise<{ counts: Record<string, number>; sizes: Record<string, number> }> {
  const { rows } = await db.query<{ name: string; estimate: string; size: string }>(`
    SELECT c.relname AS name, c.reltuples::bigint AS estimate, pg_total_relation_size(c.oid) AS size FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname <> '_prisma_migrations' ORDER BY c.relname`);
  const counts: Record<string, number> = {};
  const sizes: Record<string, number> = {};
  for (const row of rows) {
    counts[row.name] = (BULK_TABLES as readonly string[]).includes(row.name)
      ? Number(row.estimate)
      : (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${row.name}"`)).rows[0]!.n;
    sizes[row.name] = Number(row.size);
  }
  return { counts, sizes };
}

/**
 * Just before the service starts: points the windowed agents' calling windows (and their waiting calls' not_before) at
 * `opensAt` (minute precision is fine; the window must stay open for at least 2 hours after it opens).
 */
export async function scheduleWindow(databaseUrl: string, data: ScaleData, opensAt: Date): Promise<void> {
  const local = DateTime.fromJSDate(opensAt, { zone: WINDOWED_ZONE });
  const startMinutes = local.hour * 60 + local.minute;
  const endMinutes = startMinutes + 180;
  const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  // A window ending after midnight belongs to the day it starts on (calling-window.ts); one ending at midnight is 24:00.
  const windows = [
    { days: [local.weekday], start: hhmm(startMinutes), end: endMinutes === 1440 ? '24:00' : hhmm(endMinutes % 1440) },
  ];
  const db = await connect(databaseUrl);
  try {
    await db.query('BEGIN');
    await db.query(`UPDATE agents SET calling_windows = $2::jsonb, updated_at = now() WHERE id = ANY($1::uuid[])`, [
      data.windowedAgentIds,
      JSON.stringify(windows),
    ]);
    await db.query(
      `
      UPDATE calls SET not_before = $2::timestamptz, expires_at = $2::timestamptz + ${TTL}, updated_at = now()
       WHERE account_id IN (SELECT account_id FROM agents WHERE id = ANY($1::uuid[])) AND agent_id = ANY($1::uuid[]) AND status = 'initiated'`,
      [data.windowedAgentIds, opensAt],
    );
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  } finally {
    await db.end();
  }
}

async function main() {
  const factor = Number(process.argv[2] ?? 1);
  if (!(factor > 0)) throw new Error(`factor must be a positive number, not ${process.argv[2]}`);
  const adminUrl = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
  const database = await freshDatabase(adminUrl, 'scale');
  log(`database ${database.name}, factor ${factor}`);
  try {
    const data = await buildScaleData(database.url, {
      shape: scaledShape(factor),
      history: process.env.BENCH_HISTORY !== '0',
      log,
      receiverUrl: 'http://127.0.0.1:9/receiver',
      stallUrl: 'http://127.0.0.1:9/stall',
    });
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
    for (const table of Object.keys(data.counts)) {
      process.stdout.write(
        `${table.padEnd(22)} ${String(data.counts[table]).padStart(10)} rows ${mb(data.sizes[table]!).padStart(9)}\n`,
      );
    }
    process.stdout.write(`built in ${data.buildSeconds} s: ${JSON.stringify(data.phases)}\n`);
    process.stdout.write(
      `big account ${data.bigAccount.accountId}, call ${data.bigAccount.callId}, deep cursor ${data.bigAccount.deepCursorCreatedAt}\n`,
    );
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
