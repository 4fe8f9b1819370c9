// `npm run bench`: builds, starts the embedded PostgreSQL the product ships (or uses BENCH_DATABASE_URL), starts the
// service and a bare baseline as child processes on fresh databases, drives them from a load child (closed loop with
// autocannon, open loop at fixed rates), and writes bench/results/latest.{json,md}: latencies pooled over every
// request or call of every round, throughputs the median of the rounds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { benchPostgres, type BenchPostgres } from './database.js';
import { DNC_ENTRIES, seedDoNotCall } from './do-not-call.js';
import { zipfShare } from './load.js';
import * as phase from './phases.js';
import {
  DIAGNOSED,
  diagnosticNodeFlags,
  ROOT,
  serviceCommit,
  startBaseline,
  startService,
  type Child,
} from './processes.js';
import { startReceiver } from './receiver.js';
import { stalledStartedLatency } from './stalled.js';
import { writeResults, type Results } from './report.js';
import { BENCH_CLIENT_IP, type Server, type Settings } from './scenarios.js';
import {
  connect,
  createTenants,
  freshDatabase,
  machineFacts,
  withoutServiceTriggers,
  type BenchDatabase,
} from './setup.js';

/** BENCH_CALLING_RULES's settings (schemas/compliance.ts AgencyCallingRules). */
const BENCH_RULES = {
  enabled: true,
  rule_sets: [],
  call_kinds: ['telephone_solicitation', 'telemarketing', 'automated'],
  own_rules: [
    {
      name: 'All day',
      applies_to: ['telephone_solicitation', 'telemarketing', 'automated'],
      hours: Object.fromEntries(
        ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, { start: '00:00', end: '24:00' }]),
      ),
      days_not_allowed: [],
      holidays: [],
    },
  ],
  cap: null,
  consent_required: false,
};

const env = process.env;
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
if (ROUNDS < 3 && !env.BENCH_OUT && !env.BENCH_ONLY)
  throw new Error('BENCH_ROUNDS below 3 is for smoke runs: set BENCH_OUT (or BENCH_ONLY) so bench/results is kept');
/** A subset of accepted,paced,diagnostic,started,stalled,webhooks,refusals (to iterate on one figure); default: all. */
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : null;
const runs = (name: string) => !ONLY || ONLY.has(name);
// Experiments only (e.g. BENCH_SERVICE_ENV=LOG_LEVEL=warn,SIMULATED_TALK_MS=5000): overrides for the service.
const EXTRA_ENV = Object.fromEntries(
  (env.BENCH_SERVICE_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench');
/** Partial, profiled or modified runs must not overwrite the committed results. */
const OUT_DIR =
  env.BENCH_OUT ||
  (ONLY ||
  DIAGNOSED ||
  env.BENCH_SERVICE_ENV ||
  env.BENCH_SERVICE_ROOT ||
  env.BENCH_STEADY_SECONDS ||
  env.BENCH_STARTED_ACCOUNTS ||
  env.BENCH_SECONDS ||
  env.BENCH_F_SECONDS
    ? path.join(LOG_DIR, 'results')
    : path.join(ROOT, 'bench', 'results'));
const TENANTS = 200;

const settings: Settings = {
  connections: 32,
  pacedConnections: 64,
  // BENCH_SECONDS: shorter runs for a smoke test (results then go to $TMPDIR, not bench/results).
  peakSeconds: Number(env.BENCH_SECONDS || 5),
  pacedSeconds: Number(env.BENCH_SECONDS || 5),
  refusalSeconds: Number(env.BENCH_SECONDS || 5),
  latencyRate: 50,
  latencySeconds: Number(env.BENCH_F_SECONDS || 10),
  steadySeconds: Number(env.BENCH_STEADY_SECONDS || 300),
  startedAccounts: Number(env.BENCH_STARTED_ACCOUNTS || 500),
  zipf: 1,
  deliveries: 6000,
};
/** (d)'s first seconds on its freshly started service: a warm-up, logged and kept in the JSON, not in the figures. */
const WARM_UP_SECONDS = Math.min(10, settings.steadySeconds);
/** The per-account limit (src/config.ts MAX_CONCURRENT_CALLS, default 10) the bench's services run with. */
const MAX_CONCURRENT_CALLS = Number(EXTRA_ENV.MAX_CONCURRENT_CALLS ?? 10);
/** (d)'s agents: open every minute of every day, so no call is held, but the window code runs on every claim. */
const AGENT_HOURS = { timezone: 'America/New_York', windows: ['daily 00:00-24:00'] };
const ACCEPTING_ENV = {
  REDIS_URL,
  LOG_LEVEL: 'info',
  DIALER: 'simulated',
  DISPATCH_ENABLED: 'true',
  WEBHOOK_DELIVERY_ENABLED: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // The limiter still runs (through Redis) on every request, but never refuses; queues never fill.
  RATE_LIMIT_PER_MINUTE: '1000000000',
  MAX_QUEUED_CALLS: '1000000',
  // Calls start as soon as they are claimed and end half a second later, so the queues drain between runs.
  SIMULATED_RING_MS: '0',
  SIMULATED_TALK_MS: '500',
  ...EXTRA_ENV,
};
// For the refusals: the documented default limit, and failed keys never turned into 429 by the per-IP counter.
const REFUSING_ENV = { ...ACCEPTING_ENV, RATE_LIMIT_PER_MINUTE: '100', AUTH_FAILURES_PER_MINUTE: '1000000000' };
const REQUEST_PATH_ONLY_ENV = { ...ACCEPTING_ENV, DISPATCH_ENABLED: 'false', WEBHOOK_DELIVERY_ENABLED: 'false' };
// (d), the realistic path: each simulated call rings its own 1-3 s, then talks half a second. The limit and the
// queue are raised as for (a): the busiest account gets more than 100 triggers a minute, and its queue grows
// past the default 1,000 over a 5-minute round (bench/README.md says why and what that changes).
const STARTED_ENV = { ...ACCEPTING_ENV, SIMULATED_RING_MS: '1000-3000', SIMULATED_TALK_MS: '500', ...EXTRA_ENV };

const log = (message: string) => process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function main() {
  const startedAt = Date.now();
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  if (!env.BENCH_SKIP_BUILD) {
    log('npm run build');
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('build failed');
  }
  const cleanup: (() => Promise<void>)[] = [];
  // One cleanup at a time: a signal and the main flow's `finally` may both ask, and the second waits for the first
  // (or the process would exit while PostgreSQL is still being stopped).
  let cleaning: Promise<void> | null = null;
  const runCleanup = () =>
    (cleaning ??= (async () => {
      while (cleanup.length > 0) await cleanup.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
    })().finally(() => {
      cleaning = null;
    }));
  // Interrupted (Ctrl-C): stop the child processes, drop the databases and stop PostgreSQL before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void runCleanup().finally(() => process.exit(130));
    });
  }
  let postgres: BenchPostgres | undefined;
  try {
    postgres = await benchPostgres(log);
  } catch (error) {
    await runCleanup();
    throw error;
  }
  const pgServer = postgres;
  cleanup.push(() => pgServer.stop());
  const ADMIN_URL = pgServer.adminUrl;
  let machine: Awaited<ReturnType<typeof machineFacts>>;
  try {
    machine = await machineFacts(ADMIN_URL, REDIS_URL);
  } catch (error) {
    await runCleanup();
    throw error;
  }
  const loadBefore = loadAverage();
  log(
    `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres} (${pgServer.kind === 'embedded' ? `embedded, in ${pgServer.dataDir}` : 'BENCH_DATABASE_URL'}), Redis ${machine.redis}; load average ${loadBefore}; logs in ${LOG_DIR}`,
  );
  const profile = diagnosticNodeFlags();
  const serve = async (
    name: string,
    serviceEnv: Record<string, string>,
    database: BenchDatabase,
  ): Promise<Child & Server> => {
    const child = await startService({
      env: { ...serviceEnv, DATABASE_URL: database.url },
      logFile: path.join(LOG_DIR, `${name}.log`),
      nodeFlags: profile,
    });
    cleanup.push(() => child.stop());
    return { ...child, pid: child.process.pid!, database: database.name };
  };
  let settingsOfPostgres: Record<string, string> | undefined;
  let bench: phase.Bench | undefined;
  try {
    const receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    const databases: BenchDatabase[] = [];
    cleanup.push(async () => {
      for (const d of databases) await d.drop();
    });
    const fresh = async (label: string) => {
      const d = await freshDatabase(ADMIN_URL, label);
      databases.push(d);
      return d;
    };
    const svcDb = await fresh('svc');
    const tenants = await createTenants(svcDb.url, TENANTS, receiver.url);
    // BENCH_DNC_ENTRIES: a do-not-call list of that many numbers (bench/do-not-call.ts says which and why).
    const seedList = async (url: string, accountId: string) => {
      if (DNC_ENTRIES <= 0) return;
      const seconds = await seedDoNotCall(url, accountId, DNC_ENTRIES);
      log(`do-not-call list of ${DNC_ENTRIES} numbers seeded in ${seconds.toFixed(1)} s`);
    };
    await seedList(svcDb.url, tenants[0]!.accountId);
    const db = await connect(svcDb.url);
    cleanup.push(() => db.end());
    // BENCH_CALLING_RULES=1: every agency's calling rules on, with an own rule open all day and no cap, so that every
    // attempt pays every check (candidates, hours in each zone, the lock and count per number) and none is held.
    if (process.env.BENCH_CALLING_RULES === '1') {
      await db.query(`UPDATE accounts SET calling_rules = $1::jsonb WHERE kind = 'agency'`, [
        JSON.stringify(BENCH_RULES),
      ]);
      log('calling rules on for every agency (an own rule open all day, no cap)');
    }
    log(
      `database ${svcDb.name}: ${tenants.length} tenants, each with a key, a default agent and a webhook to ${receiver.url}`,
    );
    bench = { settings, rounds: ROUNDS, tenants, receiver, db, table: [], targets: [], runs: {}, log };
    settingsOfPostgres = await postgresSettings(db);

    const service = await serve('service', ACCEPTING_ENV, svcDb);
    let peak = Number.NaN;
    let baselinePeak = Number.NaN;
    if (runs('accepted') || runs('paced') || runs('refusals') || runs('diagnostic')) {
      const baseDb = await fresh('base');
      await withoutServiceTriggers(baseDb.url);
      await createTenants(baseDb.url, 1); // the agent and account its rows point at
      const baseline = await startBaseline(baseDb.url, path.join(LOG_DIR, 'baseline.log'));
      cleanup.push(() => baseline.stop());
      peak = await phase.acceptedVsBaseline(bench, service, {
        port: baseline.port,
        pid: baseline.process.pid!,
        database: baseDb.name,
      });
      baselinePeak = bench.table.find((r) => r.scenario.startsWith('baseline'))!.throughput!;
      await baseline.stop();
    }
    if (runs('paced') && Number.isFinite(peak)) await phase.pacedLatency(bench, service, peak);
    if (runs('webhooks')) await phase.webhookDrain(bench);
    await service.stop();
    if (runs('started')) {
      // (d) on its own database and service: its accounts, agents and keys are its own.
      const startedDb = await fresh('started');
      const startedTenants = await createTenants(startedDb.url, settings.startedAccounts, receiver.url, AGENT_HOURS);
      const startedConn = await connect(startedDb.url);
      cleanup.push(() => startedConn.end());
      log(
        `database ${startedDb.name}: ${startedTenants.length} accounts, agents open ${AGENT_HOURS.windows.join(', ')} (${AGENT_HOURS.timezone}); the busiest gets ${(zipfShare(startedTenants.length, settings.zipf, 1) * 100).toFixed(1)}% of the load`,
      );
      const started = await serve('service-started', STARTED_ENV, startedDb);
      await phase.startedLatency(
        { ...bench, tenants: startedTenants, db: startedConn },
        started,
        MAX_CONCURRENT_CALLS,
        WARM_UP_SECONDS,
      );
      await started.stop();
    }
    if (runs('stalled')) await stalledStartedLatency(bench, { env: ACCEPTING_ENV, fresh, serve });

    if (runs('diagnostic') && Number.isFinite(baselinePeak)) {
      // Its own database: with no dispatcher its calls stay queued and must not reach the other service.
      const onlyDb = await fresh('reqpath');
      const onlyTenants = await createTenants(onlyDb.url, TENANTS);
      await seedList(onlyDb.url, onlyTenants[0]!.accountId);
      const only = await serve('service-request-path-only', REQUEST_PATH_ONLY_ENV, onlyDb);
      const onlyBench = { ...bench, tenants: onlyTenants, db: await connect(onlyDb.url) };
      cleanup.push(() => onlyBench.db.end());
      const onlyPeak = await phase.requestPathOnly(onlyBench, only, baselinePeak);
      await phase.pacedLatency(onlyBench, only, onlyPeak, 'diagnostic: request path only', false);
      await only.stop();
    }
    if (runs('refusals') && Number.isFinite(peak)) {
      const refusing = await serve('service-refusing', REFUSING_ENV, svcDb);
      await phase.refusals(bench, refusing, peak);
      await refusing.stop();
    }
  } finally {
    await runCleanup();
    // The 401 scenario's failure counter (its own client address) would otherwise linger for a minute.
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis
      .connect()
      .then(() => redis.del(`oct:auth-fail:${BENCH_CLIENT_IP}`))
      .catch(() => undefined);
    redis.disconnect();
  }

  const results: Results = {
    generatedAt: new Date().toISOString(),
    commit: serviceCommit(),
    durationSeconds: (Date.now() - startedAt) / 1000,
    machine,
    conditions: [
      pgServer.kind === 'embedded'
        ? `Database: the embedded PostgreSQL ${machine.postgres} the product ships (src/storage/embedded-postgres.ts, as \`npm start\` runs it without DATABASE_URL), in a temporary DATA_DIR of its own, stock settings (autovacuum ${settingsOfPostgres?.autovacuum ?? '?'}, shared_buffers ${settingsOfPostgres?.shared_buffers ?? '?'}, max_connections ${settingsOfPostgres?.max_connections ?? '?'}). The bench issues no VACUUM, ANALYZE or other tuning.`
        : `Database: BENCH_DATABASE_URL, PostgreSQL ${machine.postgres} (autovacuum ${settingsOfPostgres?.autovacuum ?? '?'}, shared_buffers ${settingsOfPostgres?.shared_buffers ?? '?'}): NOT the default deployment's database, so these figures are not the default's. The bench issues no VACUUM, ANALYZE or other tuning.`,
      'Service: `node --enable-source-maps dist/src/server.js` with TLS_MODE=proxy (plain HTTP, `X-Forwarded-Proto: https`), so the comparison with the plain-HTTP baseline is about the application, not TLS.',
      'Service as deployed, except (bench/README.md lists each): RATE_LIMIT_PER_MINUTE and MAX_QUEUED_CALLS raised (the refusals run with the default limit), WEBHOOK_ALLOW_PRIVATE_TARGETS=true (receivers on 127.0.0.1), the simulated dialer (ring 0 ms and talk 500 ms for (a) and (e); ring 1-3 s and talk 500 ms for (d)).',
      'Baseline: bare Fastify + one `pg` INSERT of the same call row into its own fresh migrated database; no auth, limits, validation, logging or background work.',
      'Load: a separate child process; closed loop (autocannon) for the peaks and refusals; open loop for fixed rates, each request sent at its intended time and its latency counted from that time (coordinated omission corrected). Every server is its own child process; all share the machine with PostgreSQL, Redis and the bench runner.',
      `(d): ${settings.latencyRate} triggers/s for ${settings.steadySeconds} s per round after a ${WARM_UP_SECONDS} s warm-up on its freshly started service, ${settings.startedAccounts} accounts drawn Zipf (s=${settings.zipf}), an Idempotency-Key on every trigger, agents open ${AGENT_HOURS.windows.join(', ')} in ${AGENT_HOURS.timezone}, webhook receivers answering after 50-200 ms.`,
      'CPU per request: user + system CPU of the server process and of the PostgreSQL backends serving its database, per counted response, during the run (background work for those calls that happens after the run is not included).',
      ...(DNC_ENTRIES > 0
        ? [
            `Do-not-call: ${DNC_ENTRIES} numbers on the first tenant's list (BENCH_DNC_ENTRIES); every trigger's check probes that index.`,
          ]
        : []),
      `Latencies are pooled over every request or call of ${ROUNDS} rounds (the worst round and the spread in the notes); throughputs are the median of the rounds; ratios are taken within a round (ours vs baseline back to back). Load average before: ${loadBefore}; after: ${loadAverage()}.`,
    ],
    settings: {
      ...settings,
      tenants: TENANTS,
      rounds: ROUNDS,
      doNotCallEntries: DNC_ENTRIES,
      accepting: ACCEPTING_ENV,
      refusing: REFUSING_ENV,
      requestPathOnly: REQUEST_PATH_ONLY_ENV,
      started: STARTED_ENV,
      startedWarmUpSeconds: WARM_UP_SECONDS,
      agentHours: AGENT_HOURS,
      database: pgServer.kind,
      postgresSettings: settingsOfPostgres ?? {},
    },
    table: bench?.table ?? [],
    targets: bench?.targets ?? [],
    runs: bench?.runs ?? {},
  };
  const md = writeResults(OUT_DIR, results);
  process.stdout.write(`\n${md}\nWritten to ${OUT_DIR}\n`);
}

/** The server settings a reader needs to know the database was stock (as the bench found them; it sets none). */
async function postgresSettings(db: pg.Client): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)`,
    [['autovacuum', 'shared_buffers', 'max_connections', 'work_mem', 'synchronous_commit', 'fsync', 'jit']],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting]));
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
