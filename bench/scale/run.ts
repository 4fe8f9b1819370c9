// `npm run bench:scale` (issue 25 points 1, 3, 5, 6): on the embedded PostgreSQL the product ships (stock settings,
// autovacuum on; BENCH_DATABASE_URL for another server), each dimension on its own (history, tenants, queue:
// bench/scale/data.ts) beside a truly empty database of its own (BASE: only what the measurements need), both built
// side by side and left to autovacuum, each with its own service; then the same measurements three times (the quiet
// service's CPU, drain, triggers, webhooks, dashboard pages under trigger load), interleaved: each phase on one
// database, then on the other, the order alternating per run, so that the host's drift falls on both alike; per run
// and pooled, each against its own empty database. On the history database also a bounded retention pass under load, an online upgrade (a
// CONCURRENTLY migration under load, a new release's start) and the replicas, once its empty one is gone. Writes
// scale.{json,md} (bench/results/ for a full run). Options and how to read it: bench/README.md, "npm run bench:scale".
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { benchPostgres } from '../database.js';
import { DIAGNOSED, diagnosticNodeFlags, ROOT, serviceCommit, startService, type Child } from '../processes.js';
import { startReceiver } from '../receiver.js';
import { acceptingEnv } from '../service-env.js';
import { connect, freshDatabase, machineFacts, type BenchDatabase } from '../setup.js';
import { startBlackHole } from '../stalled.js';
import { pooled, percentiles } from '../stats.js';
import { BASE, buildScaleData, DIMENSIONS, FULL_SHAPE, scaledShape, type Dimension, type ScaleData } from './data.js';
import { insertDrainCalls } from './data-tenants.js';
import {
  HttpVisitor,
  measureDashboardUnderLoad,
  type DashboardPage,
  type DashboardSamples,
} from './measure-dashboard.js';
import {
  claimPassFigures,
  histogramSum,
  measureDrain,
  rememberDrain,
  round,
  scrapeHistogram,
  type DrainFigures,
} from './measure-drain.js';
import { measureRetention } from './measure-retention.js';
import {
  acceptedSoFar,
  endpointsOf,
  fixedRateTriggers,
  measureIdle,
  triggerFigures,
  waitQuiet,
  webhookDrain,
  type IdleFigures,
  type TriggerFigures,
  type WebhookFigures,
} from './measure-service.js';
import { measureUpgrade } from './measure-upgrade.js';
import { runReplicaScaling, replicaTable } from './replicas.js';
import { writeScaleResults, type DatabaseRun, type ScaleResults } from './report.js';

const env = process.env;
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const FACTOR = Number(env.BENCH_SCALE_FACTOR || 1);
const SHAPE = FACTOR === 1 ? FULL_SHAPE : scaledShape(FACTOR);
const PHASES = ['idle', 'drain', 'triggers', 'webhooks', 'dashboard', 'retention', 'upgrade', 'replicas'] as const;
/** BENCH_ONLY: databases (empty, history, tenants, queue) and/or phases. */
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : null;
/**
 * The dimensions measured, each beside an empty database of its own (so `empty` beside dimensions adds nothing); the
 * empty database alone when BENCH_ONLY names it and no dimension.
 */
const named = DIMENSIONS.filter((l) => ONLY?.has(l));
const measured = DIMENSIONS.filter((l) => l !== 'empty' && (named.length === 0 || named.includes(l)));
const databases: Dimension[] = measured.length > 0 ? measured : ['empty'];
const runs = (phase: (typeof PHASES)[number]) => !ONLY || !PHASES.some((p) => ONLY.has(p)) || ONLY.has(phase);
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench-scale');
/** Partial or diagnosed runs (BENCH_PROFILE, BENCH_NODE_FLAGS) must not overwrite the committed results. */
const PARTIAL = FACTOR !== 1 || ONLY !== null || DIAGNOSED;
const OUT_DIR = env.BENCH_OUT || (PARTIAL ? path.join(LOG_DIR, 'results') : path.join(ROOT, 'bench', 'results'));

const SETTINGS = {
  runs: Number(env.BENCH_SCALE_RUNS || 3),
  triggerRate: 200,
  triggerSeconds: Number(env.BENCH_SCALE_TRIGGER_SECONDS || 20),
  /**
   * (c)'s due deliveries: enough per healthy endpoint that the rate is measured over seconds, some 30 claim passes (30
   * each took 0.1-0.4 s: three passes, where the worker's wake and one slow pass made the figure), and enough per
   * timing-out one to hold its cap, as before.
   */
  webhookDeliveries: { perHealthy: 300, perStalled: 30 },
  /**
   * The drain's due calls on every database: 37-140 claim passes a run over 16-30 s on this machine (6,000 gave 20-35
   * passes over 4-6 s, where one stall of the host moved a run's p50 threefold and a side's pooled p50 by 1.7x). How
   * many depends on which of the dispatcher's two modes a run falls into (bench/README.md, "How to read it").
   */
  drainCalls: 18_000,
  drainTimeoutSeconds: 600,
  dashboardRate: 50,
  dashboardSeconds: Number(env.BENCH_SCALE_DASHBOARD_SECONDS || 20),
  retentionRounds: 3,
  retentionRate: 200,
  retentionWithoutSeconds: 10,
  upgradeRate: 100,
  upgradeLoadSeconds: Number(env.BENCH_SCALE_UPGRADE_SECONDS || Math.max(30, Math.round(240 * FACTOR))),
  upgradeLeadSeconds: 5,
  warmUpSeconds: 5,
  /**
   * (i): how long each side's quiet service is watched. Both sides' services run all along, so a cost of a large
   * database's that never stops (a poll that reads the queue) slows the empty side's phases as much as its own and no
   * ratio of (a) to (d) shows it: this figure does (the due-accounts poll: docs/performance.md#the-dispatchers-poll-on-a-queue).
   */
  idleSeconds: Number(env.BENCH_SCALE_IDLE_SECONDS || 10),
  autovacuumMaxMinutes: Number(env.BENCH_SCALE_AUTOVACUUM_MINUTES || 60),
  // One round of each replica count keeps the phase within its budget (replicas.ts defaults to 2).
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

/** What to undo, newest last: services, connections, databases, the server. Ctrl-C undoes all of it before leaving. */
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

/** What every database shares: the server and the webhook receiver (each side has its own stall servers). */
interface Shared {
  adminUrl: string;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
}

/**
 * The stall servers: one per timing-out endpoint, as in bench/stalled.ts. The sender keeps at most 50 sockets per
 * host, so 20 endpoints on one server would hold 50 attempts in all instead of theirs each. Each database has its own,
 * so that the attempts held at the end of (c) are its service's alone.
 */
interface Stall {
  url: string;
  urls: string[];
  open: () => number;
}

type Service = Child & { internalPort: number };

async function serve(name: string, database: BenchDatabase): Promise<Service> {
  return startService({
    env: { ...SERVICE_ENV, DATABASE_URL: database.url },
    logFile: path.join(LOG_DIR, `${name}.log`),
    nodeFlags: diagnosticNodeFlags(name),
  });
}

/**
 * What to undo for one database (its service, visitor, connection, stall servers, the database), newest first, each
 * once: the empty database beside a dimension is released as soon as its runs are done, and the cleanup stack
 * releases whatever is left on every way out.
 */
class Undo {
  private readonly steps: (() => Promise<void>)[] = [];
  push(step: () => Promise<void>) {
    this.steps.push(step);
  }
  async release() {
    while (this.steps.length > 0) await this.steps.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
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

const PAGES: DashboardPage[] = ['overview', 'firstPage', 'deepPage', 'nameSearch', 'detail'];
/** The phases run on both databases of a pair, interleaved. */
const INTERLEAVED = ['idle', 'drain', 'triggers', 'webhooks', 'dashboard'] as const;
type InterleavedPhase = (typeof INTERLEAVED)[number];

/** One built database with its service: a dimension's, the empty one beside it, or the empty one alone. */
interface Side {
  /** In the log and the results: `tenants`, `empty (beside tenants)`, or `empty`. */
  name: string;
  database: BenchDatabase;
  data: ScaleData;
  db: pg.Client;
  run: DatabaseRun;
  stall: Stall;
  stalledEndpoints: string[];
  keys: string[];
  undo: Undo;
  service?: Service;
  /** One sign-in per service for all its runs, as a user stays signed in. */
  visitor?: HttpVisitor;
  idleRuns: IdleFigures[];
  drains: DrainFigures[];
  triggerSamples: number[][];
  triggerRuns: TriggerFigures[];
  webhookRuns: WebhookFigures[];
  pageSamples: DashboardSamples[];
  dashboardTriggers: number[][];
}

/**
 * A fresh database of `dimension` (the empty one `beside` a dimension, or a dimension's own), built and left to
 * autovacuum, its timing-out endpoints on stall servers of its own.
 */
async function buildSide(dimension: Dimension, beside: Dimension | null, shared: Shared, undo: Undo): Promise<Side> {
  const name = beside ? `${dimension} (beside ${beside})` : dimension;
  const holes = await Promise.all(Array.from({ length: BASE.timingOut }, () => startBlackHole()));
  for (const hole of holes) undo.push(() => hole.close());
  const stall: Stall = {
    url: holes[0]!.url,
    urls: holes.map((h) => h.url),
    open: () => holes.reduce((n, h) => n + h.open(), 0),
  };
  const database = await freshDatabase(shared.adminUrl, beside ? `scale_${dimension}_${beside}` : `scale_${dimension}`);
  undo.push(async () => {
    if (env.BENCH_KEEP === '1') log(`kept ${database.name}`);
    else await database.drop();
  });
  const data: ScaleData = await step(`${name}: build`, () =>
    buildScaleData(database.url, {
      shape: SHAPE,
      dimension,
      receiverUrl: shared.receiver.url,
      stallUrl: stall.url,
      autovacuumMaxMs: SETTINGS.autovacuumMaxMinutes * 60_000,
      log: (line) => log(`${name}: ${line}`),
    }),
  );
  const db = await connect(database.url);
  undo.push(() => db.end());
  const stalledEndpoints = await endpointsOf(db, data.endpointAccounts.timingOut);
  await db.query(
    `UPDATE webhook_endpoints e SET url = u.url FROM unnest($1::uuid[], $2::text[]) AS u(id, url) WHERE e.id = u.id`,
    [stalledEndpoints, stalledEndpoints.map((_, i) => stall.urls[i % stall.urls.length]!)],
  );
  return {
    name,
    database,
    data,
    db,
    stall,
    stalledEndpoints,
    keys: data.keyed.map((k) => k.key),
    undo,
    run: {
      label: dimension,
      buildSeconds: data.buildSeconds,
      buildPhases: data.phases,
      autovacuum: data.autovacuum,
      deadRowsAfterBuild: data.deadRows,
      counts: data.counts,
      sizes: sizes(data.sizes),
      loadAverage: {},
      errors: {},
      seconds: 0,
    },
    idleRuns: [],
    drains: [],
    triggerSamples: [],
    triggerRuns: [],
    webhookRuns: [],
    pageSamples: [],
    dashboardTriggers: [],
  };
}

/** The side's service, started, warmed up by 5 s of triggers, then quiet. */
async function startSide(side: Side): Promise<Service> {
  // The log's name: `tenants-service.log`, `empty-beside-tenants-service.log`.
  const service = await serve(`${side.name.replace(/\W+/g, '-').replace(/-$/, '')}-service`, side.database);
  side.service = service;
  side.undo.push(async () => {
    side.visitor?.close();
    await service.stop();
  });
  await fixedRateTriggers(service.port, side.keys, SETTINGS.triggerRate, SETTINGS.warmUpSeconds);
  await waitQuiet(side.db, side.stalledEndpoints);
  return service;
}

/** A phase that fails is recorded in the side's results and the run goes on with the next one. */
async function measure<T>(side: Side, name: string, work: () => Promise<T>): Promise<T | undefined> {
  side.run.loadAverage[name] = loadAverage();
  try {
    return await step(`${side.name}: ${name}`, work);
  } catch (error) {
    side.run.errors[name] = (error as Error).message;
    log(`${side.name}: ${name} failed: ${(error as Error).stack}`);
    return undefined;
  }
}

/** One of (a) to (d), run r, on one side's running service; it waits for the service to be quiet again after. */
async function measurePhase(side: Side, phase: InterleavedPhase, r: number, shared: Shared): Promise<void> {
  const { db, keys, stalledEndpoints, data } = side;
  const service = side.service!;
  const phases: Record<InterleavedPhase, [name: string, work: () => Promise<void>]> = {
    idle: [
      `(i) quiet service for ${SETTINGS.idleSeconds} s, run ${r}`,
      async () => {
        const idle = await measureIdle(service.process.pid!, side.database.name, SETTINGS.idleSeconds);
        log(
          `${side.name}: quiet: service ${idle.serviceMsPerSecond} ms/s, its database's sessions ${idle.databaseMsPerSecond} ms/s of CPU`,
        );
        side.idleRuns.push(idle);
      },
    ],
    drain: [
      `(a) drain of ${SETTINGS.drainCalls} calls, run ${r}`,
      async () => {
        const before = await scrapeHistogram(service.internalPort, 'oct_dispatch_pass_duration_seconds');
        const ids = await insertDrainCalls(db, data.layout, SETTINGS.drainCalls, new Date());
        const committedAt = new Date();
        await rememberDrain(db, ids);
        const drain = await measureDrain(
          { db, internalPort: service.internalPort, committedAt, timeoutMs: SETTINGS.drainTimeoutSeconds * 1000, log },
          before,
        );
        log(
          `${side.name}: drain ${drain.perSecond}/s, claim pass p50 ${drain.claimPasses.p50Ms} ms p99 ${drain.claimPasses.p99Ms} ms (${drain.claimPasses.count}, ${drain.claimPasses.msPerCall} ms a call), max active per account ${drain.maxActivePerAccount}`,
        );
        side.drains.push(drain);
        await waitQuiet(db, stalledEndpoints);
      },
    ],
    triggers: [
      `(b) triggers, run ${r}`,
      async () => {
        const result = await fixedRateTriggers(service.port, keys, SETTINGS.triggerRate, SETTINGS.triggerSeconds);
        const triggers = triggerFigures(result, SETTINGS.triggerRate);
        log(
          `${side.name}: triggers p50 ${triggers.p50} ms p99 ${triggers.p99} ms ${JSON.stringify(triggers.statuses)}`,
        );
        side.triggerRuns.push(triggers);
        side.triggerSamples.push(result.samples ?? []);
        await waitQuiet(db, stalledEndpoints);
      },
    ],
    webhooks: [
      `(c) webhooks, run ${r}`,
      async () => {
        const webhooks = await webhookDrain(
          db,
          shared.receiver,
          stalledEndpoints,
          SETTINGS.webhookDeliveries,
          side.stall.open,
        );
        log(
          `${side.name}: webhooks ${webhooks.perSecond}/s (${webhooks.healthy} healthy in ${webhooks.seconds} s; ${webhooks.heldAtEnd} held by the stall server)`,
        );
        side.webhookRuns.push(webhooks);
        await waitQuiet(db, stalledEndpoints);
      },
    ],
    dashboard: [
      `(d) dashboard under ${SETTINGS.dashboardRate} triggers/s, run ${r}`,
      async () => {
        // The detail view: the big account's newest call (on the empty database, one the triggers made).
        const {
          rows: [newest],
        } = await db.query<{ id: string }>(
          'SELECT id FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
          [data.bigAccount.accountId],
        );
        if (!newest) throw new Error('dashboard: the big account has no call to show');
        const before = await acceptedSoFar(service.internalPort);
        if (!side.visitor) {
          side.visitor = new HttpVisitor(service.port);
          await side.visitor.signIn(data.bigAccount.email, data.bigAccount.password);
        }
        const { pages, load } = await measureDashboardUnderLoad(
          side.visitor,
          { ...data.bigAccount, callId: newest.id },
          () => fixedRateTriggers(service.port, keys, SETTINGS.dashboardRate, SETTINGS.dashboardSeconds),
          async () => (await acceptedSoFar(service.internalPort)) - before >= 10,
        );
        for (const page of PAGES) {
          const p = percentiles(pages[page].samples);
          log(`${side.name}: ${pages[page].name}: p50 ${p.p50} ms, p99 ${p.p99} ms (${p.count} requests)`);
        }
        side.pageSamples.push(pages);
        side.dashboardTriggers.push(load.samples ?? []);
        await waitQuiet(db, stalledEndpoints);
      },
    ],
  };
  const [name, work] = phases[phase];
  await measure(side, name, work);
}

/** The side's runs of (a) to (d) into its results: each run's figures and the runs pooled. */
function poolRuns(side: Side): void {
  const { run, drains, webhookRuns, pageSamples, idleRuns } = side;
  if (idleRuns.length > 0) {
    const seconds = idleRuns.reduce((n, i) => n + i.seconds, 0);
    const cpu = (of: (i: IdleFigures) => number) =>
      round(idleRuns.reduce((n, i) => n + of(i) * i.seconds, 0) / seconds, 1);
    run.idle = {
      runs: idleRuns,
      pooled: {
        seconds: round(seconds, 1),
        serviceMsPerSecond: cpu((i) => i.serviceMsPerSecond),
        databaseMsPerSecond: cpu((i) => i.databaseMsPerSecond),
        msPerSecond: cpu((i) => i.msPerSecond),
      },
    };
  }
  if (drains.length > 0) {
    const calls = drains.reduce((n, d) => n + d.calls, 0);
    const seconds = drains.reduce((n, d) => n + d.seconds, 0);
    run.drain = {
      // The histograms are pooled below, not kept per run.
      runs: drains.map((d) => ({ ...d, passes: undefined })),
      pooled: {
        calls,
        seconds: round(seconds, 2),
        perSecond: Math.round(calls / seconds),
        claimPasses: claimPassFigures(histogramSum(drains.map((d) => d.passes)), calls),
        maxActivePerAccount: Math.max(...drains.map((d) => d.maxActivePerAccount)),
      },
    };
  }
  if (side.triggerRuns.length > 0) run.triggers = { runs: side.triggerRuns, pooled: pooled(side.triggerSamples) };
  if (webhookRuns.length > 0) {
    const healthy = webhookRuns.reduce((n, w) => n + w.healthy, 0);
    const seconds = webhookRuns.reduce((n, w) => n + w.seconds, 0);
    run.webhooks = {
      runs: webhookRuns,
      pooled: { healthy, seconds: round(seconds, 2), perSecond: Math.round(healthy / seconds) },
    };
  }
  if (pageSamples.length > 0) {
    run.dashboard = {
      rate: SETTINGS.dashboardRate,
      pages: Object.fromEntries(
        PAGES.map((page) => [
          page,
          {
            name: pageSamples[0]![page].name,
            path: pageSamples[0]![page].path,
            ...pooled(pageSamples.map((s) => s[page].samples)),
          },
        ]),
      ) as NonNullable<DatabaseRun['dashboard']>['pages'],
      all: pooled(pageSamples.map((s) => PAGES.flatMap((page) => s[page].samples))),
      triggers: pooled(side.dashboardTriggers),
    };
  }
}

/**
 * One dimension with a fresh empty database of its own, built side by side, each with its own service; then (a) to
 * (d) SETTINGS.runs times, interleaved: each phase on one database, then on the other, the empty one first in odd
 * runs and the dimension first in even ones. Then the empty database is dropped and its service stopped; on history
 * (e), (g) and (f) follow on the dimension's service alone. `dimension` 'empty' (BENCH_ONLY=empty and no dimension):
 * the empty database alone, as before the pairs.
 */
async function measurePair(
  dimension: Dimension,
  shared: Shared,
): Promise<{ run: DatabaseRun; replicas?: ScaleResults['replicas'] }> {
  const at = performance.now();
  const alone = dimension === 'empty';
  const mainUndo = new Undo();
  cleanup.push(() => mainUndo.release());
  const emptyUndo = new Undo();
  cleanup.push(() => emptyUndo.release());
  // Built side by side (the empty one's inserts take seconds, then it waits for autovacuum as the dimension's does);
  // both builds run to their end before a failure of either is reported, so that nothing is left writing.
  const built = await Promise.allSettled([
    buildSide(dimension, null, shared, mainUndo),
    ...(alone ? [] : [buildSide('empty', dimension, shared, emptyUndo)]),
  ]);
  const failure = built.find((b) => b.status === 'rejected');
  if (failure) throw failure.reason;
  const [main, empty] = built.map((b) => (b as PromiseFulfilledResult<Side>).value) as [Side, Side | undefined];
  const pair = empty ? [empty, main] : [main];
  for (const side of pair) await step(`${side.name}: service start and warm-up`, () => startSide(side));
  for (let r = 1; r <= SETTINGS.runs; r++) {
    // Odd runs the empty database first, even runs the dimension first: neither always follows the other.
    const order = r % 2 === 1 ? pair : [...pair].reverse();
    if (empty) log(`run ${r}: ${order.map((s) => s.name).join(', then ')}, phase by phase`);
    for (const phase of INTERLEAVED)
      if (runs(phase)) for (const side of order) await measurePhase(side, phase, r, shared);
  }
  for (const side of pair) poolRuns(side);
  if (empty) {
    // Its service no longer takes CPU from the history's own phases, and its database is gone.
    await emptyUndo.release();
    empty.run.seconds = Math.round((performance.now() - at) / 1000);
    main.run.empty = empty.run;
  }
  const { run, database, data, db, stalledEndpoints, keys } = main;
  const service = main.service!;
  if (dimension === 'history' && runs('retention')) {
    run.retention = await measure(main, '(e) retention', async () => {
      // The same warm service: a warm-up load, then the rounds.
      await fixedRateTriggers(service.port, keys, SETTINGS.retentionRate, SETTINGS.warmUpSeconds);
      await waitQuiet(db, stalledEndpoints);
      return measureRetention({
        databaseUrl: database.url,
        config: loadConfig({ ...SERVICE_ENV, DATABASE_URL: database.url }),
        port: service.port,
        internalPort: service.internalPort,
        keys,
        rate: SETTINGS.retentionRate,
        rounds: SETTINGS.retentionRounds,
        withoutSeconds: SETTINGS.retentionWithoutSeconds,
        log,
      });
    });
    await waitQuiet(db, stalledEndpoints).catch((error: Error) => log(`after retention: ${error.message}`));
  }
  if (dimension === 'history' && runs('upgrade')) {
    run.upgrade = await measure(main, '(g) online upgrade', async () => {
      const upgrade = await measureUpgrade({
        db,
        databaseUrl: database.url,
        port: service.port,
        internalPort: service.internalPort,
        keys,
        rate: SETTINGS.upgradeRate,
        loadSeconds: SETTINGS.upgradeLoadSeconds,
        leadSeconds: SETTINGS.upgradeLeadSeconds,
        startRelease: () =>
          startService({
            env: { ...SERVICE_ENV, DATABASE_URL: database.url },
            logFile: path.join(LOG_DIR, `${dimension}-release.log`),
          }),
        log,
      });
      log(
        `${dimension}: upgrade ${upgrade.seconds} s; triggers during it p50 ${upgrade.during.p50} p99 ${upgrade.during.p99} max ${upgrade.during.max} ms (${upgrade.during.count}) ${JSON.stringify(upgrade.statuses)}; new release ready in ${upgrade.restartSeconds} s`,
      );
      return upgrade;
    });
    await waitQuiet(db, stalledEndpoints).catch((error: Error) => log(`after upgrade: ${error.message}`));
  }
  main.visitor?.close();
  await service.stop();
  run.seconds = Math.round((performance.now() - at) / 1000);
  if (dimension !== 'history' || !runs('replicas')) return { run };
  return {
    run,
    replicas: await measure(main, '(f) replicas', () => replicas(database, data, db, stalledEndpoints, shared)),
  };
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
  const results: DatabaseRun[] = [];
  const failed: Record<string, string> = {};
  let replicaResults: ScaleResults['replicas'];
  let machine: ScaleResults['machine'] | undefined;
  let database: ScaleResults['database'] | undefined;
  try {
    // The server goes first on the cleanup stack: stopped (and its directory removed) last, on every way out.
    const postgres = await benchPostgres(log);
    cleanup.push(() => postgres.stop());
    machine = await machineFacts(postgres.adminUrl, REDIS_URL);
    database = { kind: postgres.kind, settings: await postgresSettings(postgres.adminUrl) };
    log(
      `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres} (${postgres.kind}, ${JSON.stringify(database.settings)}); scale factor ${FACTOR}; databases ${databases.map((l) => (l === 'empty' ? 'empty alone' : `${l} beside its own empty`)).join(', ')}; logs in ${LOG_DIR}`,
    );
    const receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    const shared: Shared = { adminUrl: postgres.adminUrl, receiver };
    for (const label of databases) {
      // Each pair is dropped before the next is built; one that fails (a build) is reported, the next goes on.
      try {
        const measured = await scoped(() => measurePair(label, shared));
        results.push(measured.run);
        replicaResults = measured.replicas ?? replicaResults;
      } catch (error) {
        failed[label] = (error as Error).message;
        log(`${label} failed: ${(error as Error).stack}`);
      }
    }
  } finally {
    while (cleanup.length > 0) await cleanup.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
  const scale: ScaleResults = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    commit: serviceCommit(),
    factor: FACTOR,
    shape: { ...SHAPE },
    base: { ...BASE },
    machine,
    database,
    settings: { ...SETTINGS, service: SERVICE_ENV },
    runs: results,
    failed,
    ...(replicaResults ? { replicas: replicaResults } : {}),
    steps,
  };
  const md = writeScaleResults(OUT_DIR, scale);
  process.stdout.write(`\n${md}\nWritten to ${OUT_DIR}\n`);
}

/** The server settings a reader needs to know the database was stock (as the bench found them; it sets none). */
async function postgresSettings(adminUrl: string): Promise<Record<string, string>> {
  const db = await connect(adminUrl);
  try {
    const { rows } = await db.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)`,
      [
        [
          'autovacuum',
          'autovacuum_naptime',
          'shared_buffers',
          'max_connections',
          'work_mem',
          'maintenance_work_mem',
          'synchronous_commit',
          'fsync',
          'jit',
        ],
      ],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting]));
  } finally {
    await db.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
