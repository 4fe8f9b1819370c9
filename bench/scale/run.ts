// `npm run bench:scale` (issue 16 point 2): the same service and settings as `npm run bench`, measured on an empty
// database and then on a large one (bench/scale/data.ts: millions of finished calls, deliveries, 10,000 accounts,
// 100,000 waiting calls, 200 endpoints of which 20 time out), each figure next to its empty-database counterpart;
// writes bench/results/scale.{json,md}. Options and how to read it: bench/README.md, "Scale".
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { ROOT, startService, type Child } from '../processes.js';
import { startReceiver } from '../receiver.js';
import { acceptingEnv } from '../service-env.js';
import { connect, freshDatabase, machineFacts, type BenchDatabase } from '../setup.js';
import { startBlackHole } from '../stalled.js';
import { buildScaleData, FULL_SHAPE, scaledShape, scheduleWindow, type ScaleData } from './data.js';
import { measureDashboard } from './measure-dashboard.js';
import { measureDrain, rememberWaiting, type Histogram } from './measure-drain.js';
import { measureRetention } from './measure-retention.js';
import { endpointsOf, fixedRateTriggers, triggerFigures, waitQuiet, webhookDrain } from './measure-service.js';
import { runReplicaScaling, replicaTable } from './replicas.js';
import { writeScaleResults, type DatabaseRun, type ScaleResults } from './report.js';

const env = process.env;
const ADMIN_URL = env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const FACTOR = Number(env.BENCH_SCALE_FACTOR || 1);
const SHAPE = FACTOR === 1 ? FULL_SHAPE : scaledShape(FACTOR);
const DATABASE_LABELS = ['empty', 'large'] as const;
const PHASES = ['triggers', 'webhooks', 'dashboard', 'retention', 'replicas'] as const;
/** BENCH_ONLY: database labels and/or phases (the drain always runs: the waiting calls are there either way). */
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : null;
const databases = DATABASE_LABELS.filter((l) => !ONLY || !DATABASE_LABELS.some((d) => ONLY.has(d)) || ONLY.has(l));
const runs = (phase: (typeof PHASES)[number]) => !ONLY || !PHASES.some((p) => ONLY.has(p)) || ONLY.has(phase);
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench-scale');
const PARTIAL = FACTOR !== 1 || ONLY !== null;
const OUT_DIR = env.BENCH_OUT || (PARTIAL ? path.join(LOG_DIR, 'results') : path.join(ROOT, 'bench', 'results'));

const SETTINGS = {
  triggerRate: 200,
  triggerSeconds: 20,
  deliveriesPerEndpoint: 30,
  windowOpensAfterSeconds: 20,
  drainTimeoutSeconds: 600,
  retentionLoadSeconds: 20,
  retentionMaxSeconds: Number(env.BENCH_SCALE_RETENTION_MAX_SECONDS || 240),
  warmUpSeconds: 3,
  // One round of each replica count keeps the whole run within its 20 minutes (replicas.ts defaults to 2).
  replicaRounds: Number(env.BENCH_SCALE_REPLICA_ROUNDS || 2),
};
// npm run bench's service, with the retention job off: its pass is measured on its own, (e).
const SERVICE_ENV = acceptingEnv(REDIS_URL, { RETENTION_ENABLED: 'false' });

const started = performance.now();
const log = (line: string) =>
  process.stdout.write(
    `[scale ${new Date().toISOString().slice(11, 19)} +${Math.round((performance.now() - started) / 1000)}s] ${line}\n`,
  );
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const steps: ScaleResults['steps'] = [];
async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  const at = performance.now();
  log(`${name}: start (load average ${loadAverage()})`);
  try {
    return await work();
  } finally {
    steps.push({ name, seconds: Math.round((performance.now() - at) / 100) / 10 });
    log(`${name}: ${steps.at(-1)!.seconds} s`);
  }
}

/** What to undo, newest last: services, connections, databases, servers. Ctrl-C undoes all of it before leaving. */
const cleanup: (() => Promise<void>)[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void (async () => {
      while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
      process.exit(130);
    })();
  });
}

/** The history's tables and all tables together, in MB (from the build's pg_total_relation_size). */
function sizes(bytes: Record<string, number>): Record<string, string> {
  const mb = (n: number) => `${Math.round(n / 2 ** 20).toLocaleString('en')} MB`;
  const shown = ['calls', 'call_events', 'webhook_deliveries', 'webhook_attempts'].filter((t) => t in bytes);
  return {
    ...Object.fromEntries(shown.map((t) => [t, mb(bytes[t]!)])),
    'all tables': mb(Object.values(bytes).reduce((a, b) => a + b, 0)),
  };
}

/**
 * The stall servers: one per timing-out endpoint, as in bench/stalled.ts. The sender keeps at most 50 sockets per
 * host, so 20 endpoints on one server would hold 50 attempts in all instead of theirs each.
 */
interface Shared {
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  stall: { url: string; urls: string[]; open: () => number };
}

async function serve(name: string, database: BenchDatabase): Promise<Child & { internalPort: number }> {
  const child = await startService({
    env: { ...SERVICE_ENV, DATABASE_URL: database.url },
    logFile: path.join(LOG_DIR, `${name}.log`),
  });
  cleanup.push(() => child.stop());
  return child;
}

/** Runs `work`, then what it left on the cleanup stack (services, connections, its database), newest first. */
async function scoped<T>(work: () => Promise<T>): Promise<T> {
  const mark = cleanup.length;
  try {
    return await work();
  } finally {
    while (cleanup.length > mark) await cleanup.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
}

/** One database: build, then (a) to (e) against its service, and (f) the replicas on the large one. */
async function measureDatabase(
  label: 'empty' | 'large',
  shared: Shared,
): Promise<{ run: DatabaseRun; replicas?: ScaleResults['replicas'] }> {
  const at = performance.now();
  const database = await freshDatabase(ADMIN_URL, `scale_${label}`);
  cleanup.push(async () => {
    if (env.BENCH_KEEP === '1') log(`kept ${database.name}`);
    else await database.drop();
  });
  const data: ScaleData = await step(`${label}: build`, () =>
    buildScaleData(database.url, {
      shape: SHAPE,
      history: label === 'large',
      receiverUrl: shared.receiver.url,
      stallUrl: shared.stall.url,
      log: (line) => log(`${label}: ${line}`),
    }),
  );
  const db = await connect(database.url);
  cleanup.push(() => db.end());
  const run: DatabaseRun = {
    label,
    buildSeconds: data.buildSeconds,
    counts: data.counts,
    sizes: sizes(data.sizes),
    loadAverage: {},
    errors: {},
    seconds: 0,
  };
  const stalledEndpoints = await endpointsOf(db, data.endpointAccounts.timingOut);
  await db.query(
    `UPDATE webhook_endpoints e SET url = u.url FROM unnest($1::uuid[], $2::text[]) AS u(id, url) WHERE e.id = u.id`,
    [stalledEndpoints, stalledEndpoints.map((_, i) => shared.stall.urls[i % shared.stall.urls.length]!)],
  );
  const keys = data.keyed.map((k) => k.key);
  const waiting = await rememberWaiting(db);

  /** A phase that fails is recorded in the results and the run goes on with the next one. */
  const measure = async <T>(name: string, work: () => Promise<T>): Promise<T | undefined> => {
    run.loadAverage[name] = loadAverage();
    try {
      return await step(`${label}: ${name}`, work);
    } catch (error) {
      run.errors[name] = (error as Error).message;
      log(`${label}: ${name} failed: ${(error as Error).stack}`);
      return undefined;
    }
  };

  const opensAt = new Date(Date.now() + SETTINGS.windowOpensAfterSeconds * 1000);
  await scheduleWindow(database.url, data, opensAt);
  let service = await serve(`${label}-service`, database);
  const readyAt = new Date();
  // Its histogram starts at zero with the process: every pass of the drain is in it.
  const noPasses: Histogram = { buckets: [], sum: 0, count: 0 };
  run.drain = await measure(`(a) drain of ${waiting} waiting calls`, async () => {
    const drain = await measureDrain(
      {
        db,
        internalPort: service.internalPort,
        readyAt,
        opensAt,
        windowedAgentIds: data.windowedAgentIds,
        timeoutMs: SETTINGS.drainTimeoutSeconds * 1000,
        log,
      },
      noPasses,
    );
    log(
      `${label}: drain ${drain.perSecond}/s, claim pass p50 ${drain.claimPasses.p50Ms} ms p99 ${drain.claimPasses.p99Ms} ms (${drain.claimPasses.count}), max active per account ${drain.maxActivePerAccount}`,
    );
    await waitQuiet(db, stalledEndpoints);
    return drain;
  });
  if (runs('triggers')) {
    run.triggers = await measure('(b) triggers', async () => {
      const triggers = triggerFigures(
        await fixedRateTriggers(service.port, keys, SETTINGS.triggerRate, SETTINGS.triggerSeconds),
        SETTINGS.triggerRate,
      );
      log(`${label}: triggers p50 ${triggers.p50} ms p99 ${triggers.p99} ms ${JSON.stringify(triggers.statuses)}`);
      await waitQuiet(db, stalledEndpoints);
      return triggers;
    });
  }
  if (runs('webhooks')) {
    run.webhooks = await measure('(c) webhooks', async () => {
      const webhooks = await webhookDrain(
        db,
        shared.receiver,
        stalledEndpoints,
        SETTINGS.deliveriesPerEndpoint * SHAPE.endpoints,
        shared.stall.open,
      );
      log(
        `${label}: webhooks ${webhooks.perSecond}/s (${webhooks.healthy} healthy in ${webhooks.seconds} s; ${webhooks.heldAtEnd} held by the stall server)`,
      );
      await waitQuiet(db, stalledEndpoints);
      return webhooks;
    });
  }
  if (runs('dashboard')) {
    run.dashboard = await measure('(d) dashboard', async () => {
      const dashboard = await measureDashboard(service.port, data.bigAccount);
      for (const page of Object.values(dashboard))
        log(`${label}: ${page.name}: median ${page.p50} ms, p99 ${page.p99} ms (${page.rows} rows)`);
      return dashboard;
    });
  }
  if (runs('retention')) {
    run.retention = await measure('(e) retention', async () => {
      // A fresh instance takes the triggers (warmed up first) while the pass runs beside it, as another process would.
      await service.stop();
      service = await serve(`${label}-service-retention`, database);
      await fixedRateTriggers(service.port, keys, SETTINGS.triggerRate, SETTINGS.warmUpSeconds);
      await waitQuiet(db, stalledEndpoints);
      const retention = await measureRetention({
        databaseUrl: database.url,
        config: loadConfig({ ...SERVICE_ENV, DATABASE_URL: database.url }),
        port: service.port,
        internalPort: service.internalPort,
        keys,
        rate: SETTINGS.triggerRate,
        loadSeconds: SETTINGS.retentionLoadSeconds,
        maxSeconds: SETTINGS.retentionMaxSeconds,
        log,
      });
      log(
        `${label}: retention ${retention.outcome} in ${retention.seconds} s, ${retention.total} rows (${retention.rowsPerSecond}/s); triggers p99 ${retention.triggers.p99} ms`,
      );
      return retention;
    });
  }
  await service.stop();
  run.seconds = Math.round((performance.now() - at) / 1000);
  if (label !== 'large' || !runs('replicas')) return { run };
  return { run, replicas: await measure('(f) replicas', () => replicas(database, data, db, stalledEndpoints, shared)) };
}

/** The replicas on the large database, their own service processes; the timing-out endpoints' webhooks settled first. */
async function replicas(
  database: BenchDatabase,
  data: ScaleData,
  db: pg.Client,
  stalledEndpoints: string[],
  shared: Shared,
): Promise<ScaleResults['replicas']> {
  // Their deliveries never finish and would keep the replicas' wait for an idle service waiting: marked failed, and
  // the endpoints pointed at the receiver for the calls the replicas make.
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', completed_at = now(), lease_expires_at = NULL WHERE status = 'pending' AND endpoint_id = ANY($1::uuid[])`,
    [stalledEndpoints],
  );
  await db.query('UPDATE webhook_endpoints SET url = $1 WHERE id = ANY($2::uuid[])', [
    shared.receiver.url,
    stalledEndpoints,
  ]);
  const result = await runReplicaScaling({
    databaseUrl: database.url,
    redisUrl: REDIS_URL,
    serviceEnv: SERVICE_ENV,
    keys: data.keyed,
    logDir: LOG_DIR,
    log,
    rounds: SETTINGS.replicaRounds,
  });
  return { markdown: replicaTable(result), runs: result };
}

async function main() {
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  if (!env.BENCH_SKIP_BUILD) {
    await step('npm run build', async () => {
      const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('build failed');
    });
  }
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  log(
    `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres}; scale factor ${FACTOR}; databases ${databases.join(', ')}; logs in ${LOG_DIR}`,
  );
  const results: DatabaseRun[] = [];
  let replicaResults: ScaleResults['replicas'];
  try {
    const receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    const holes = await Promise.all(Array.from({ length: SHAPE.timingOut }, () => startBlackHole()));
    for (const hole of holes) cleanup.push(() => hole.close());
    const stall = {
      url: holes[0]!.url,
      urls: holes.map((h) => h.url),
      open: () => holes.reduce((n, h) => n + h.open(), 0),
    };
    const shared: Shared = { receiver, stall };
    for (const label of databases) {
      // Each database is dropped before the next is built.
      const measured = await scoped(() => measureDatabase(label, shared));
      results.push(measured.run);
      replicaResults = measured.replicas ?? replicaResults;
    }
  } finally {
    while (cleanup.length > 0) await cleanup.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
  const scale: ScaleResults = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    factor: FACTOR,
    shape: { ...SHAPE },
    machine,
    settings: { ...SETTINGS, service: SERVICE_ENV },
    runs: results,
    ...(replicaResults ? { replicas: replicaResults } : {}),
    steps,
  };
  const md = writeScaleResults(OUT_DIR, scale);
  process.stdout.write(`\n${md}\nWritten to ${OUT_DIR}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
