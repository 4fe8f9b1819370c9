// `npm run bench`: builds, starts the service and a bare baseline as child processes on fresh databases, drives
// them with autocannon from another child, and writes bench/results/latest.{json,md} with the medians of 3 rounds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import * as phase from './phases.js';
import { ROOT, startBaseline, startService, type Child } from './processes.js';
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

const env = process.env;
const ADMIN_URL = env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
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
  (ONLY || env.BENCH_PROFILE || env.BENCH_NODE_FLAGS || env.BENCH_SERVICE_ENV || env.BENCH_SERVICE_ROOT
    ? path.join(LOG_DIR, 'results')
    : path.join(ROOT, 'bench', 'results'));
const TENANTS = 200;

const settings: Settings = {
  connections: 32,
  pacedConnections: 64,
  peakSeconds: 5,
  pacedSeconds: 5,
  refusalSeconds: 5,
  latencyRate: 50,
  latencySeconds: 10,
  deliveries: 6000,
};
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
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  const loadBefore = loadAverage();
  log(
    `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres}, Redis ${machine.redis}; load average ${loadBefore}; logs in ${LOG_DIR}`,
  );
  const cleanup: (() => Promise<void>)[] = [];
  // Interrupted (Ctrl-C): stop the child processes and drop the databases before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void (async () => {
        for (const step of cleanup.reverse()) await step().catch(() => undefined);
        process.exit(130);
      })();
    });
  }
  // Diagnostics: BENCH_PROFILE=<dir> writes a CPU profile per service; BENCH_NODE_FLAGS adds node flags (e.g. --trace-gc).
  const profile = [
    ...(env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${env.BENCH_PROFILE}`] : []),
    ...(env.BENCH_NODE_FLAGS ? env.BENCH_NODE_FLAGS.split(' ').filter(Boolean) : []),
  ];
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
    const db = await connect(svcDb.url);
    cleanup.push(() => db.end());
    log(
      `database ${svcDb.name}: ${tenants.length} tenants, each with a key, a default agent and a webhook to ${receiver.url}`,
    );
    bench = { settings, rounds: ROUNDS, tenants, receiver, db, table: [], targets: [], runs: {}, log };

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
    if (runs('started')) await phase.startedLatency(bench, service);
    if (runs('webhooks')) await phase.webhookDrain(bench);
    await service.stop();
    if (runs('stalled')) await stalledStartedLatency(bench, { env: ACCEPTING_ENV, fresh, serve });

    if (runs('diagnostic') && Number.isFinite(baselinePeak)) {
      // Its own database: with no dispatcher its calls stay queued and must not reach the other service.
      const onlyDb = await fresh('reqpath');
      const onlyTenants = await createTenants(onlyDb.url, TENANTS);
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
    for (const step of cleanup.reverse()) await step().catch((error: Error) => log(`cleanup: ${error.message}`));
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
    durationSeconds: (Date.now() - startedAt) / 1000,
    machine,
    conditions: [
      'Service: `node --enable-source-maps dist/src/server.js` with TLS_MODE=proxy (plain HTTP, `X-Forwarded-Proto: https`), so the comparison with the plain-HTTP baseline is about the application, not TLS.',
      'Service as deployed: Redis rate limiting (limit raised for the accepted runs), the dispatcher with the simulated dialer (ring 0 ms, talk 500 ms), the webhook worker delivering every event to a receiver in the bench process, pino at info, metrics.',
      'Baseline: bare Fastify + one `pg` INSERT of the same call row into its own fresh migrated database; no auth, limits, validation, logging or background work.',
      'Load: autocannon in a separate child process; every server is its own child process; all share the 2 cores with PostgreSQL, Redis and the bench runner.',
      'Fixed-rate runs stagger each connection\'s per-second quota (autocannon alone refills them all at once, which makes "80% of peak" flat out for 80% of each second).',
      'CPU per request: user + system CPU of the server process and of the PostgreSQL backends serving its database, per counted response, during the run (background work for those calls that happens after the run is not included).',
      `Each figure is the median of ${ROUNDS} runs; ratios are taken within a round (ours vs baseline run back to back). Load average before: ${loadBefore}; after: ${loadAverage()} (other processes on the machine add noise).`,
    ],
    settings: {
      ...settings,
      tenants: TENANTS,
      rounds: ROUNDS,
      accepting: ACCEPTING_ENV,
      refusing: REFUSING_ENV,
      requestPathOnly: REQUEST_PATH_ONLY_ENV,
    },
    table: bench?.table ?? [],
    targets: bench?.targets ?? [],
    runs: bench?.runs ?? {},
  };
  const md = writeResults(OUT_DIR, results);
  process.stdout.write(`\n${md}\nWritten to ${OUT_DIR}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
