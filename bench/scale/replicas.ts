// Issue 16.4, replicas add up: accepted triggers and the dispatcher's drain with 1, 2 and 3 service processes on one
// PostgreSQL and Redis, and the two promises checked from the calls' own rows (no call dialled twice, never more than
// MAX_CONCURRENT_CALLS active per account).
//
// `npm run bench:scale` (bench/scale/run.ts) calls it at the end of its large-database run; bench/scale/replicas-main.ts
// runs it alone on a fresh database:
//
//   const runs = await runReplicaScaling({ databaseUrl, redisUrl, serviceEnv, keys, logDir, log });
//   markdown += replicaTable(runs);
//
// The database has its data and no service running (a call waiting for a window that has not opened may stay); its
// webhook endpoints' receiver is up (waitIdle waits for the deliveries). serviceEnv is `npm run bench`'s accepting
// environment (bench/service-env.ts); DATABASE_URL, REDIS_URL and SIMULATED_DIAL_LOG are added here. Rounds run the
// counts 1,2,3 then 3,2,1 (a drift of the shared machine weighs on both ends), a second round only if it fits in
// budgetSeconds. One run of N replicas:
//
// 1. N services (bench/processes.ts startService), each on its own ports; a warm-up burst of 3 s per replica (the same
//    requests per replica whatever N), then idle.
// 2. Accepted: a 5 s closed loop of 32 connections, from one autocannon process given the N URLs (connection i goes
//    to replica i mod N, as a balancer spreads connections; keys rotate over all of `keys` on every connection).
//    One load process whatever N, and no proxy taking CPU from the same 2 cores.
// 3. Drain, once idle: `drainCalls` due waiting calls inserted in one transaction (set-based), spread evenly over up
//    to 200 of the keys' accounts that have none waiting (so each has more than its 10 slots and the limit binds);
//    dialled per second = calls / (last started_at - commit).
// 4. Idle again, the services stopped; over every call that ended since the run began: dial_attempts > 1, ids written
//    twice to the simulated dialer's logs (one per replica), and the most calls of one account whose
//    [started_at, ended_at) overlap, by a sweep in SQL (an end and a start at the same millisecond: the end first).
// The database's work per call (issue 25.4): from the burst's start until idle again, per accepted call (each is
// also dialled and ends); the same for a paced load, the same offered load whatever N (open loop at `rate`/s for
// PACED_SECONDS, below what 3 replicas accept on 2 cores: the closed-loop burst offers each N a different load, and
// a saturated process batches more calls per pass); and from the drain's insert until idle, per drained call; and,
// with no load at all for IDLE_SECONDS after the warm-up, per second: transactions (pg_stat_database,
// less the bench's own statements), statements executed (pg_stat_statements, when loaded; the bench's own role's left
// out) and CPU of the database's backends (/proc; the bench's own left out). With `kill`, one replica (the one that
// logged last that it leads, else the first) is SIGKILLed once a third of the drain's calls have left the queue (or
// when it is empty, if it emptied between two looks).
// Why a count loses, if it does: the wait events of the database's active backends are sampled (pg_stat_activity,
// every 200 ms, with the statement's table and, for a lock, its blocker's), CPU per call is taken from /proc (the N
// services and the database's backends) and transactions per drained call from pg_stat_database.
//
// runReplicaScaling returns one ReplicaRun per count (medians over the rounds; the checks over all of them), and
// replicaTable the markdown table: each count against 1 (>= 85% of it, accepted and drain), 0 dialled twice, max
// active per account <= the limit, met or not.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { backendPids, processCpuSeconds } from '../cpu.js';
import { runLoadProcess, startService } from '../processes.js';
import { connect, waitIdle } from '../setup.js';
import { median, type Percentiles } from '../stats.js';

/** The role the bench's own connections use (bench/scale/replicas-main.ts creates it), told apart from the services'. */
export const BENCH_ROLE = 'oct_bench';

export interface ReplicaContext {
  databaseUrl: string;
  /** The same database as BENCH_ROLE, for the bench's own queries (default: databaseUrl, its work then counted in). */
  observerUrl?: string;
  /** pg_stat_statements is loaded and created in the database: statements per call are counted. */
  statements?: boolean;
  /** SIGKILL one replica mid-drain (runs of 2 or more). */
  kill?: boolean;
  /** The paced load's rate, triggers/s (default 200). */
  rate?: number;
  redisUrl: string;
  /** The service's environment (without DATABASE_URL), e.g. acceptingEnv() of bench/service-env.ts. */
  serviceEnv: Record<string, string>;
  /** Keys the burst rotates over; the drain's accounts are taken from these. */
  keys: { accountId: string; key: string }[];
  /** Service logs (replicas-<n>-r<round>-<i>.log) and dial logs go here. */
  logDir: string;
  log(line: string): void;
  /** Rounds per replica count (default 2; the figures are their medians), as many as fit in budgetSeconds. */
  rounds?: number;
  /** A round after the first runs only if it should end within this many seconds of the start (default 180). */
  budgetSeconds?: number;
  /** Calls inserted for the drain (default 3,000: 15 per account, so each waits for its 10 slots). */
  drainCalls?: number;
}

export interface ReplicaRun {
  replicas: number;
  /** Medians over the rounds. */
  acceptedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  drainCallsPerSecond: number;
  acceptedRounds: number[];
  drainRounds: number[];
  /** CPU ms per accepted trigger during the burst, and per dialled call during the drain: all N services + the database's backends. */
  acceptCpuMs: { service: number; database: number };
  drainCpuMs: { service: number; database: number };
  /** Database transactions per drained call, from the drain's insert until idle (claims, dials, steps, webhooks; retries and empty claims show here). */
  drainTransactionsPerCall: number;
  /** The database's work per accepted call (burst until idle) and per drained call (drain until idle): medians over the rounds. */
  acceptWork: DbWork;
  drainWork: DbWork;
  /** The same per accepted call at the paced rate, with its latency (p50 / p99 ms, from the intended send times). */
  pacedWork: DbWork;
  pacedLatency: { p50: number; p99: number };
  /** The same per second with no load (polls, sweeps, leader lock retries). */
  idleWork: DbWork;
  /** The most executed statements of the last round's burst and drain. */
  topStatements: { burst: string; paced: string; drain: string };
  /** Replicas SIGKILLed mid-drain, over the rounds. */
  killed: number;
  /** Over all rounds: the calls of the runs (ended during them), dials in the simulated dialer's logs, calls dialled twice (rows or logs). */
  calls: number;
  dials: number;
  dialledTwice: number;
  /** Calls that did not end completed (the bench's numbers all answer). */
  notCompleted: number;
  maxActivePerAccount: number;
  limit: number;
  /** The most sampled wait events of active backends (last round), burst and drain. */
  waits: { burst: string; drain: string };
  /** Wall time of this count's rounds, services' starts and stops included. */
  seconds: number;
}

/** The replica counts compared (BENCH_REPLICA_COUNTS, e.g. "1,3", to profile two of them). */
const COUNTS = (process.env.BENCH_REPLICA_COUNTS || '1,2,3').split(',').map(Number);
const CONNECTIONS = 32;
const BURST_SECONDS = 5;
/**
 * Warm-up per replica: each gets as many requests before the measured burst as one replica alone gets (a fresh
 * process's first seconds are compiling its hot paths; with one shared second, 3 replicas each got a third of it and
 * the burst measured their warm-up, not their sharing).
 */
const WARM_UP_SECONDS_PER_REPLICA = Number(process.env.BENCH_REPLICA_WARM_UP_SECONDS || 3);
const DRAIN_ACCOUNTS = 200;
const PACED_SECONDS = 10;
const IDLE_SECONDS = 5;
// As bench/scenarios.ts sends them: TLS_MODE=proxy, and the service insists on being told the client spoke https.
const TRIGGER = {
  path: '/api/v1/calls/trigger',
  headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
  body: JSON.stringify({ phone_number: '+14155552671', name: 'Ada Lovelace', metadata: { crm_id: 'L-42' } }),
};
const now = () => performance.timeOrigin + performance.now();

/** The database's work per call: transactions, statements (null: pg_stat_statements not loaded), backends' CPU ms. */
export interface DbWork {
  transactions: number;
  statements: number | null;
  cpuMs: number;
}

interface RoundResult {
  acceptWork: DbWork;
  pacedWork: DbWork;
  pacedLatency: Percentiles;
  idleWork: DbWork;
  drainWork: DbWork;
  topStatements: { burst: string; paced: string; drain: string };
  killed: number;
  accepted: number;
  latency: Percentiles;
  drain: number;
  drainXacts: number;
  acceptCpu: { service: number; database: number };
  drainCpu: { service: number; database: number };
  calls: number;
  dials: number;
  dialled: number;
  dialledTwice: number;
  notCompleted: number;
  maxActive: number;
  waits: { burst: string; drain: string };
}

export async function runReplicaScaling(ctx: ReplicaContext): Promise<ReplicaRun[]> {
  const rounds = ctx.rounds ?? 2;
  const limit = Number(ctx.serviceEnv.MAX_CONCURRENT_CALLS ?? 10);
  const db = await connect(ctx.observerUrl ?? ctx.databaseUrl);
  // A connection ended under us (another session's test terminating backends) fails its next query, not the process.
  db.on('error', (error) => ctx.log(`replicas: connection lost: ${error.message}`));
  try {
    const drainAccounts = await pickDrainAccounts(
      db,
      ctx.keys.map((k) => k.accountId),
    );
    const perAccount = Math.ceil((ctx.drainCalls ?? 3_000) / drainAccounts.length);
    ctx.log(
      `replicas: ${rounds} rounds of ${COUNTS.join(', ')}; drain ${perAccount * drainAccounts.length} calls over ${drainAccounts.length} accounts (${perAccount} each, limit ${limit})`,
    );
    const results = new Map<number, RoundResult[]>(COUNTS.map((n) => [n, []]));
    const seconds = new Map<number, number>(COUNTS.map((n) => [n, 0]));
    const begun = now();
    for (let round = 1; round <= rounds; round++) {
      const elapsed = (now() - begun) / 1000;
      if (round > 1 && (elapsed * round) / (round - 1) > (ctx.budgetSeconds ?? 180)) {
        ctx.log(
          `replicas: round ${round} skipped (${Math.round(elapsed)} s so far, budget ${ctx.budgetSeconds ?? 180} s)`,
        );
        break;
      }
      for (const n of round % 2 ? COUNTS : [...COUNTS].reverse()) {
        const started = now();
        const r = await runOnce(ctx, db, { n, round, drainAccounts, perAccount, limit });
        seconds.set(n, seconds.get(n)! + (now() - started) / 1000);
        results.get(n)!.push(r);
        ctx.log(
          `replicas ${n}, round ${round}: accepted ${r.accepted}/s (p99 ${r.latency.p99} ms), drain ${r.drain} dialled/s (${r.drainXacts} transactions per call); ${r.calls} calls, ${r.dialledTwice} dialled twice, max ${r.maxActive} active per account${r.killed ? `, ${r.killed} replica SIGKILLed mid-drain` : ''}; idle per second ${workCell(r.idleWork)}, per accepted call ${workCell(r.acceptWork)}, paced ${workCell(r.pacedWork)} (p50 ${r.pacedLatency.p50} / p99 ${r.pacedLatency.p99} ms), per drained call ${workCell(r.drainWork)} (transactions / statements / PG CPU ms); top statements: burst ${r.topStatements.burst}; paced ${r.topStatements.paced}; drain ${r.topStatements.drain}; waits: burst ${r.waits.burst}; drain ${r.waits.drain}`,
        );
      }
    }
    return COUNTS.map((n) => summarize(n, results.get(n)!, limit, seconds.get(n)!));
  } finally {
    await db.end();
  }
}

function summarize(replicas: number, rs: RoundResult[], limit: number, seconds: number): ReplicaRun {
  const med = (f: (r: RoundResult) => number) => Math.round(median(rs.map(f)) * 1000) / 1000;
  const sum = (f: (r: RoundResult) => number) => rs.reduce((n, r) => n + f(r), 0);
  const cpu = (f: (r: RoundResult) => { service: number; database: number }) => ({
    service: med((r) => f(r).service),
    database: med((r) => f(r).database),
  });
  const work = (f: (r: RoundResult) => DbWork): DbWork => ({
    transactions: med((r) => f(r).transactions),
    statements: f(rs[0]!).statements === null ? null : med((r) => f(r).statements ?? 0),
    cpuMs: med((r) => f(r).cpuMs),
  });
  return {
    replicas,
    acceptedPerSecond: med((r) => r.accepted),
    p50Ms: med((r) => r.latency.p50),
    p99Ms: med((r) => r.latency.p99),
    drainCallsPerSecond: med((r) => r.drain),
    acceptedRounds: rs.map((r) => r.accepted),
    drainRounds: rs.map((r) => r.drain),
    acceptCpuMs: cpu((r) => r.acceptCpu),
    drainCpuMs: cpu((r) => r.drainCpu),
    drainTransactionsPerCall: med((r) => r.drainXacts),
    acceptWork: work((r) => r.acceptWork),
    pacedWork: work((r) => r.pacedWork),
    idleWork: work((r) => r.idleWork),
    pacedLatency: { p50: med((r) => r.pacedLatency.p50), p99: med((r) => r.pacedLatency.p99) },
    drainWork: work((r) => r.drainWork),
    topStatements: rs.at(-1)!.topStatements,
    killed: sum((r) => r.killed),
    calls: sum((r) => r.calls),
    dials: sum((r) => r.dials),
    dialledTwice: sum((r) => r.dialledTwice),
    notCompleted: sum((r) => r.notCompleted),
    maxActivePerAccount: Math.max(...rs.map((r) => r.maxActive)),
    limit,
    waits: rs.at(-1)!.waits,
    seconds: Math.round(seconds),
  };
}

/** Accounts of the keys with no call waiting and a default agent that can call now (a number, no windows): the drain is theirs alone. */
async function pickDrainAccounts(db: pg.Client, accountIds: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `
    SELECT a.id FROM accounts a JOIN agents ag ON ag.id = a.default_agent_id
     WHERE a.id = ANY($1::uuid[]) AND a.waiting_calls = 0 AND ag.phone_number IS NOT NULL AND ag.calling_windows = '[]'::jsonb
     ORDER BY a.id LIMIT ${DRAIN_ACCOUNTS}`,
    [accountIds],
  );
  if (rows.length === 0)
    throw new Error('replicas: no account among the keys has a default agent with a number and no calling windows');
  return rows.map((r) => r.id);
}

interface RunPlan {
  n: number;
  round: number;
  drainAccounts: string[];
  perAccount: number;
  limit: number;
}

async function runOnce(ctx: ReplicaContext, db: pg.Client, plan: RunPlan): Promise<RoundResult> {
  const since = new Date();
  const dialLogs = Array.from({ length: plan.n }, (_, i) =>
    path.join(ctx.logDir, `replicas-${plan.n}-r${plan.round}-${i + 1}.dials`),
  );
  for (const f of dialLogs) fs.rmSync(f, { force: true });
  const services = await Promise.all(
    dialLogs.map((dialLog, i) =>
      startService({
        env: { ...ctx.serviceEnv, DATABASE_URL: ctx.databaseUrl, REDIS_URL: ctx.redisUrl, SIMULATED_DIAL_LOG: dialLog },
        logFile: path.join(ctx.logDir, `replicas-${plan.n}-r${plan.round}-${i + 1}.log`),
      }),
    ),
  );
  let measured: Omit<RoundResult, keyof Awaited<ReturnType<typeof checkCalls>>>;
  try {
    const pids = services.map((s) => s.process.pid!);
    const workOf = () => workMeter(db, ctx, database);
    const database = new URL(ctx.databaseUrl).pathname.slice(1);
    const load = (seconds: number, rate?: number) =>
      runLoadProcess({
        ...(rate ? { rate } : {}),
        url: services.map((s) => `http://127.0.0.1:${s.port}`),
        ...TRIGGER,
        keys: ctx.keys.map((k) => k.key),
        connections: CONNECTIONS,
        durationSeconds: seconds,
        expectStatus: 200,
      });
    await load(WARM_UP_SECONDS_PER_REPLICA * plan.n);
    await waitIdle(db);

    let work = await workOf();
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000 - 1_000)); // end() waits the last second
    const { perCall: idleWork } = await work.end(IDLE_SECONDS);

    let waits = await startSampling(ctx.observerUrl ?? ctx.databaseUrl);
    let cpu = cpuMeter(pids, database);
    work = await workOf();
    const burst = await load(BURST_SECONDS);
    const acceptCpu = cpu.perCall(burst.statuses['200'] ?? 0);
    const burstWaits = await waits.stop();
    const refused = Object.entries(burst.statuses).filter(([code]) => code !== '200');
    if (refused.length > 0 || burst.errors > 0)
      ctx.log(
        `replicas ${plan.n}: the burst also got ${JSON.stringify(Object.fromEntries(refused))}, ${burst.errors} errors`,
      );
    await waitIdle(db);
    const { perCall: acceptWork, top: burstStatements } = await work.end(burst.statuses['200'] ?? 0);

    work = await workOf();
    const paced = await load(PACED_SECONDS, ctx.rate ?? 200);
    await waitIdle(db);
    const { perCall: pacedWork, top: pacedStatements } = await work.end(paced.statuses['200'] ?? 0);

    waits = await startSampling(ctx.observerUrl ?? ctx.databaseUrl);
    cpu = cpuMeter(pids, database);
    work = await workOf();
    const xactsBefore = await transactions(db);
    let killed = 0;
    const victim = ctx.kill && plan.n > 1 ? leaderOf(services, plan, ctx.logDir) : null;
    const drain = await drainOnce(db, plan, () => {
      if (victim === null || killed > 0) return;
      killed = 1;
      ctx.log(`replicas ${plan.n}: SIGKILL replica ${victim + 1} mid-drain`);
      services[victim]!.process.kill('SIGKILL');
    });
    const drainCpu = cpu.perCall(drain.calls);
    const drainWaits = await waits.stop();
    await waitIdle(db);
    const drainXacts = Math.round((((await transactions(db)) - xactsBefore) / drain.calls) * 100) / 100;
    const { perCall: drainWork, top: topStatements } = await work.end(drain.calls);
    measured = {
      acceptWork,
      idleWork,
      pacedWork,
      pacedLatency: paced.latency,
      drainWork,
      topStatements: { burst: burstStatements, paced: pacedStatements, drain: topStatements },
      killed,
      accepted: Math.round(burst.throughput),
      latency: burst.latency,
      drain: drain.perSecond,
      acceptCpu,
      drainCpu,
      drainXacts,
      waits: { burst: burstWaits, drain: drainWaits },
    };
  } finally {
    await Promise.all(services.map((s) => s.stop()));
  }
  const checked = await checkCalls(db, since, dialLogs);
  if (checked.dials !== checked.dialled)
    ctx.log(
      `replicas ${plan.n}: ${checked.dials} dials in the dialer's logs but ${checked.dialled} calls with a dial attempt`,
    );
  return { ...measured, ...checked };
}

/**
 * Inserts the drain's calls (and their first event) in one transaction, wakes the dispatchers, and times the claims;
 * `third` is called once a third of them have left the queue (or all).
 */
async function drainOnce(
  db: pg.Client,
  { drainAccounts, perAccount }: RunPlan,
  third: () => void = () => undefined,
): Promise<{ calls: number; perSecond: number }> {
  await db.query('BEGIN');
  const {
    rows: [made],
  } = await db.query<{ n: number; at: Date }>(
    `
    WITH acc AS (SELECT a.id, ag.id AS agent_id, ag.phone_number FROM accounts a JOIN agents ag ON ag.id = a.default_agent_id WHERE a.id = ANY($1::uuid[])),
         made AS (
           INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at, created_at, updated_at)
           SELECT gen_random_uuid(), acc.id, acc.agent_id, '+14155552671', acc.phone_number, '{"bench":"replicas"}', 'initiated',
                  now(), now() + interval '1 hour', now(), now()
             FROM acc CROSS JOIN generate_series(1, $2) g
           RETURNING id, created_at),
         events AS (INSERT INTO call_events (id, call_id, to_status, source, occurred_at) SELECT gen_random_uuid(), id, 'initiated', 'bench', created_at FROM made)
    SELECT count(*)::int AS n, min(created_at) AS at FROM made`,
    [drainAccounts, perAccount],
  );
  await db.query(`SELECT pg_notify('oct_calls', NULL)`);
  await db.query('COMMIT');
  const committedAt = now();
  const deadline = committedAt + 180_000;
  for (;;) {
    const {
      rows: [w],
    } = await db.query<{ waiting: number }>(
      'SELECT coalesce(sum(waiting_calls), 0)::int AS waiting FROM accounts WHERE id = ANY($1::uuid[])',
      [drainAccounts],
    );
    // At the latest when the queue is empty (its last calls still dialling and talking): a fast drain may empty it
    // between two looks.
    if (w!.waiting <= (made!.n * 2) / 3) third();
    if (w!.waiting === 0) break;
    if (now() > deadline) throw new Error(`replicas: ${w!.waiting} drain calls still waiting after 180 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const {
    rows: [last],
  } = await db.query<{ at: Date }>(
    `
    SELECT max(started_at) AS at FROM calls WHERE account_id = ANY($1::uuid[]) AND created_at >= $2`,
    [drainAccounts, made!.at],
  );
  const seconds = (last!.at.getTime() - committedAt) / 1000;
  return { calls: made!.n, perSecond: Math.round(made!.n / seconds) };
}

/**
 * The promises, from the rows of every call that ended since `since` (the service was idle before and is again: every
 * call of the run has ended; the calls table's ended_at index finds them in a database with a year of history) and
 * from the dialer's own logs.
 */
async function checkCalls(db: pg.Client, since: Date, dialLogs: string[]) {
  const {
    rows: [c],
  } = await db.query<{ calls: number; twice: number; dialled: number; not_completed: number }>(
    `
    SELECT count(*)::int AS calls, count(*) FILTER (WHERE dial_attempts > 1)::int AS twice, count(*) FILTER (WHERE dial_attempts > 0)::int AS dialled,
           count(*) FILTER (WHERE status <> 'completed')::int AS not_completed
      FROM calls WHERE ended_at >= $1`,
    [since],
  );
  // Half-open [started_at, ended_at): at equal instants the end counts first (d = -1 sorts before +1).
  const {
    rows: [s],
  } = await db.query<{ max_active: number }>(
    `
    WITH run AS (SELECT account_id, started_at, ended_at FROM calls WHERE ended_at >= $1 AND started_at IS NOT NULL),
         moves AS (SELECT account_id, started_at AS at, 1 AS d FROM run
                   UNION ALL SELECT account_id, ended_at, -1 FROM run WHERE ended_at IS NOT NULL)
    SELECT coalesce(max(active), 0)::int AS max_active
      FROM (SELECT sum(d) OVER (PARTITION BY account_id ORDER BY at, d ROWS UNBOUNDED PRECEDING) AS active FROM moves) sweep`,
    [since],
  );
  const ids = dialLogs.flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []));
  const logTwice = ids.length - new Set(ids).size;
  return {
    calls: c!.calls,
    dials: ids.length,
    dialled: c!.dialled,
    dialledTwice: Math.max(c!.twice, logTwice),
    notCompleted: c!.not_completed,
    maxActive: s!.max_active,
  };
}

/** The replica that logged last that its dispatcher leads (src/dispatch/dispatcher.ts), else the first. */
function leaderOf(services: unknown[], plan: RunPlan, logDir: string): number {
  let leader = 0;
  let at = '';
  services.forEach((_, i) => {
    const file = path.join(logDir, `replicas-${plan.n}-r${plan.round}-${i + 1}.log`);
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
    for (const line of lines)
      if (line.includes('dispatcher leads')) {
        const time = /"time":(\d+)/.exec(line)?.[1] ?? '';
        if (time >= at) [leader, at] = [i, time];
      }
  });
  return leader;
}

/** The database's backends serving the services (the bench's own role left out). */
function serviceBackends(databaseName: string): number[] {
  return backendPids(databaseName).filter((pid) => {
    try {
      return !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`postgres: ${BENCH_ROLE} `);
    } catch {
      return false;
    }
  });
}

/**
 * The database's work from now until end(calls), per call: transactions (less the bench's own statements, each its
 * own transaction but for the drain's insert), statements (pg_stat_statements, reset here) and backends' CPU. A
 * second's wait before the end: backends report their transactions to pg_stat_database within a second.
 */
async function workMeter(db: pg.Client, ctx: ReplicaContext, databaseName: string) {
  if (ctx.statements) await db.query('SELECT pg_stat_statements_reset()');
  const xacts = await transactions(db);
  const backends = new Map(serviceBackends(databaseName).map((pid) => [pid, processCpuSeconds(pid)]));
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    async end(calls: number): Promise<{ perCall: DbWork; top: string }> {
      await new Promise((r) => setTimeout(r, 1_000));
      const cpu = serviceBackends(databaseName).reduce(
        (n, pid) => n + processCpuSeconds(pid) - (backends.get(pid) ?? 0),
        0,
      );
      let xactsDone = (await transactions(db)) - xacts;
      let statements: number | null = null;
      let top = 'pg_stat_statements not loaded';
      if (ctx.statements) {
        const { rows } = await db.query<{ mine: boolean; calls: string; query: string }>(
          `SELECT s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user) AS mine, s.calls::text,
                  left(regexp_replace(s.query, '\\s+', ' ', 'g'), 60) AS query
             FROM pg_stat_statements s WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY s.calls DESC`,
        );
        const count = (mine: boolean) => rows.filter((r) => r.mine === mine).reduce((n, r) => n + Number(r.calls), 0);
        statements = count(false);
        xactsDone -= count(true);
        top = rows
          .filter((r) => !r.mine)
          .slice(0, 12)
          .map((r) => `${r.calls} × ${r.query}`)
          .join(' | ');
      }
      const n = Math.max(1, calls);
      return {
        perCall: {
          transactions: round(xactsDone / n),
          statements: statements === null ? null : round(statements / n),
          cpuMs: round((cpu * 1000) / n),
        },
        top,
      };
    },
  };
}

/** Transactions committed or rolled back in the database so far (as its backends have reported them, within a second). */
async function transactions(db: pg.Client): Promise<number> {
  const {
    rows: [t],
  } = await db.query<{ n: string }>(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(t!.n);
}

/** CPU of the services and of the database's backends from now on, per call. */
function cpuMeter(pids: number[], databaseName: string) {
  const backends = new Map(backendPids(databaseName).map((pid) => [pid, processCpuSeconds(pid)]));
  const services = pids.map(processCpuSeconds);
  return {
    perCall(calls: number) {
      const service = pids.reduce((n, pid, i) => n + processCpuSeconds(pid) - services[i]!, 0);
      const database = backendPids(databaseName).reduce(
        (n, pid) => n + processCpuSeconds(pid) - (backends.get(pid) ?? 0),
        0,
      );
      const ms = (s: number) => Math.round(((s * 1000) / Math.max(1, calls)) * 1000) / 1000;
      return { service: ms(service), database: ms(database) };
    },
  };
}

const TAG = (query: string) =>
  `coalesce(${['(oct_\\w+)\\(', 'UPDATE +"?(\\w+)', 'INSERT INTO +"?(\\w+)', 'DELETE FROM +"?(\\w+)', 'FROM +"?(\\w+)']
    .map((re) => `substring(regexp_replace(${query}, 'FOR (NO KEY )?UPDATE', '', 'g') from '${re}')`)
    .join(', ')}, 'statement')`;

/** Samples the wait events of the database's active backends every 200 ms; stop() gives the most frequent. */
async function startSampling(databaseUrl: string) {
  const client = await connect(databaseUrl);
  client.on('error', () => undefined); // the loop's next query fails and ends it
  const counts = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  let lost = '';
  const loop = (async () => {
    while (!stopped) {
      // Each names its statement (its function, or the first table it updates, inserts into or reads); a lock wait also its first blocker's.
      const { rows } = await client.query<{ wait: string; n: number }>(`
        WITH a AS (SELECT pid, wait_event_type, wait_event, query FROM pg_stat_activity
                    WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid())
        SELECT coalesce(a.wait_event_type || ':' || a.wait_event, 'CPU') || ' [' || ${TAG('a.query')}
               || CASE WHEN a.wait_event_type = 'Lock' THEN ' behind '
                    || coalesce((SELECT ${TAG('b.query')} FROM pg_stat_activity b WHERE b.pid = (pg_blocking_pids(a.pid))[1]), '?') ELSE '' END || ']' AS wait,
               count(*)::int AS n
          FROM a GROUP BY 1`);
      samples++;
      for (const r of rows) counts.set(r.wait, (counts.get(r.wait) ?? 0) + r.n);
      await new Promise((r) => setTimeout(r, 200));
    }
  })().catch((error: Error) => {
    lost = `; sampling stopped: ${error.message}`;
  });
  return {
    async stop() {
      stopped = true;
      await loop;
      await client.end().catch(() => undefined);
      const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 6);
      return `${top.map(([w, n]) => `${w} ${(n / samples).toFixed(1)}`).join(', ') || 'none'} (active backends per sample, ${samples} samples${lost})`;
    },
  };
}

const pct = (ratio: number) => `${Math.floor(ratio * 100)}%`; // floor: 84.6% is not 85%
const workCell = (w: DbWork) =>
  `${w.transactions.toFixed(3)} / ${w.statements?.toFixed(2) ?? '-'} / ${w.cpuMs.toFixed(2)}`;

/**
 * Markdown: the database's work per accepted-and-dialled call (burst until idle) and per drained call (drain until
 * idle), each against 1 replica (issue 25.4: within 1.2x), and the checks.
 */
export function workTable(runs: ReplicaRun[]): string {
  const one = runs.find((r) => r.replicas === 1);
  const ratio = (v: number | null, base: number | null | undefined) =>
    v === null || !base ? '' : ` (${(v / base).toFixed(2)}x)`;
  const lines = [
    '| Replicas | Per accepted call, paced (same load): PG transactions / statements / PG CPU ms | Paced p50 / p99 ms | Per accepted call, burst (closed loop): PG transactions / statements / PG CPU ms | Per drained call: PG transactions / statements / PG CPU ms | Idle, per second: PG transactions / statements / PG CPU ms | Dialled twice | Max active per account | SIGKILLed mid-drain | Not completed | Target: paced work within 1.2x of 1 replica |',
    '|---:|---|---:|---|---|---|---:|---:|---:|---:|---|',
  ];
  // Issue 25.4: at the same offered load (the paced window), each figure within 1.2x of one replica's.
  const target = (w: DbWork, base: DbWork | undefined) => {
    if (!base) return '-';
    const over = (['transactions', 'statements', 'cpuMs'] as const).filter((k) => {
      const [v, b] = [w[k], base[k]];
      return v !== null && b !== null && b > 0 && v / b > 1.2;
    });
    return over.length === 0 ? 'met' : `**not met** (${over.join(', ')})`;
  };
  const cells = (w: DbWork, base: DbWork | undefined) =>
    `${w.transactions.toFixed(3)}${ratio(w.transactions, base?.transactions)} / ${w.statements?.toFixed(2) ?? '-'}${ratio(w.statements, base?.statements)} / ${w.cpuMs.toFixed(2)}${ratio(w.cpuMs, base?.cpuMs)}`;
  for (const r of runs)
    lines.push(
      `| ${r.replicas} | ${cells(r.pacedWork, one?.pacedWork)} | ${r.pacedLatency.p50.toFixed(1)} / ${r.pacedLatency.p99.toFixed(1)} | ${cells(r.acceptWork, one?.acceptWork)} | ${cells(r.drainWork, one?.drainWork)} | ${cells(r.idleWork, one?.idleWork)} | ${r.dialledTwice} | ${r.maxActivePerAccount} | ${r.killed} | ${r.notCompleted} | ${r.replicas === 1 ? '-' : target(r.pacedWork, one?.pacedWork)} |`,
    );
  return lines.join('\n');
}
const cpuCell = (c: { service: number; database: number }) => `${c.service.toFixed(2)} + ${c.database.toFixed(2)}`;

/**
 * Markdown: one row per replica count, the ratios of 2 and 3 to 1, and each row's targets. Throughput is reported, not
 * a target (issue 25.4: more processes on the same 2 cores only share them); the database's work per call against 1
 * replica is workTable's (bench/scale/replicas-main.ts, with pg_stat_statements and the bench's own role left out).
 */
export function replicaTable(runs: ReplicaRun[]): string {
  const one = runs.find((r) => r.replicas === 1);
  const lines = [
    '| Replicas | Accepted/s (rounds) | p50 / p99 ms | vs 1 | Drain dialled/s (rounds) | vs 1 | CPU ms per accepted / per dialled (services + PostgreSQL) | PG transactions per dialled | Calls | Dialled twice | Max active per account | Target |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of runs) {
    const accepted = one ? r.acceptedPerSecond / one.acceptedPerSecond : Number.NaN;
    const drain = one ? r.drainCallsPerSecond / one.drainCallsPerSecond : Number.NaN;
    const missed = [
      ...(r.dialledTwice > 0 ? [`${r.dialledTwice} dialled twice`] : []),
      ...(r.maxActivePerAccount > r.limit ? [`${r.maxActivePerAccount} active > ${r.limit}`] : []),
    ];
    const target = `0 dialled twice, max active <= ${r.limit}`;
    lines.push(
      `| ${r.replicas} | ${Math.round(r.acceptedPerSecond)} (${r.acceptedRounds.join(', ')}) | ${r.p50Ms.toFixed(1)} / ${r.p99Ms.toFixed(1)} | ${r.replicas > 1 ? pct(accepted) : '-'} ` +
        `| ${Math.round(r.drainCallsPerSecond)} (${r.drainRounds.join(', ')}) | ${r.replicas > 1 ? pct(drain) : '-'} | ${cpuCell(r.acceptCpuMs)} / ${cpuCell(r.drainCpuMs)} ` +
        `| ${r.drainTransactionsPerCall.toFixed(2)} | ${r.calls} | ${r.dialledTwice} | ${r.maxActivePerAccount} | ${target}: ${missed.length ? `**not met** (${missed.join(', ')})` : 'met'} |`,
    );
  }
  return lines.join('\n');
}
