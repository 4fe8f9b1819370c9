// Issue 47.8: what the voice-agent runtime's API costs. `npx tsx bench/agent-result.ts` builds (unless
// BENCH_SKIP_BUILD), starts the embedded PostgreSQL (or BENCH_DATABASE_URL), a Twilio stand-in answering every call
// create at once and a webhook receiver, and two services (dist/, DIALER=twilio) on databases of their own:
// "result" with AGENT_RESULT_WAIT_SECONDS=10, "no wait" with 0 (the terminal event as it went before the runtime's
// result existed). Each round, on answered calls (triggered, dialled, their signed `in-progress` callback sent):
//
// - result service: GET .../calls/{id} once per call, then POST .../calls/{id}/result once per call (an outcome, a
//   ~500-character summary, 10 data keys, a 40-entry transcript), each at BENCH_RATE for BENCH_SECONDS, open loop
//   (bench/agent-result-load.ts); latency from each request's intended send time, CPU per request of the service and
//   its PostgreSQL backends (bench/cpu.ts). Then each call's signed `completed` callback at the same rate: latency
//   from the callback's intended send time to the receiver getting its call.completed (which carries the result).
// - no-wait service: as many answered calls, hung up the same way, no result.
//
// The terminal event's added latency is the first hang-up latency minus the second, pooled p50 and p99; each batch of
// hang-ups starts with nothing pending and a quiet second. The services swap order every round; a first round of 100
// calls each warms them up (in the JSON, not in the figures); each service's CPU with nothing sent (its polling, part
// of every CPU per request) is reported beside. Results in $BENCH_OUT/agent-result.json (default
// $TMPDIR/oct-bench/), logs in $TMPDIR/oct-bench/agent-result/.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { CONTEXT_TOKEN_KEY_PURPOSE } from '../plugins/context-tokens.js';
import { signContextToken } from '../src/domain/context-token.js';
import type { PreparedRequest } from './agent-result-load.js';
import * as parts from './agent-result-parts.js';
import { cpuSince, cpuSnapshot } from './cpu.js';
import { benchPostgres } from './database.js';
import { ROOT, serviceCommit, startService, type Child } from './processes.js';
import type { Server } from './scenarios.js';
import { acceptingEnv } from './service-env.js';
import { connect, createTenants, freshDatabase, machineFacts, waitIdle, type Tenant } from './setup.js';
import { percentiles, pooled, type Percentiles } from './stats.js';

const env = process.env;
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const RATE = Number(env.BENCH_RATE || 50);
const SECONDS = Number(env.BENCH_SECONDS || 20);
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
const CALLS = Math.round(RATE * SECONDS);
const WARM_UP_CALLS = Math.min(100, CALLS);
const WAIT_SECONDS = 10;
/** The default MAX_CONCURRENT_CALLS: a round's calls all live at once need this many accounts' slots. */
const PER_ACCOUNT = 10;
const TENANTS = Math.ceil(CALLS / PER_ACCOUNT);
const CONNECTIONS = 64;
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench', 'agent-result');
const OUT_FILE = path.join(env.BENCH_OUT || path.join(os.tmpdir(), 'oct-bench'), 'agent-result.json');
const HTTPS = { 'x-forwarded-proto': 'https' };
const SETTLE_MS = 1000;
const QUIET_SECONDS = 5;

const log = (message: string) =>
  process.stdout.write(`[agent-result ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

interface Side {
  name: 'result' | 'no-wait';
  service: Child & Server;
  db: pg.Client;
  tenants: Tenant[];
  key: Buffer;
}

interface Peers {
  standIn: Awaited<ReturnType<typeof parts.startTwilioStandIn>>;
  receiver: Awaited<ReturnType<typeof parts.startTerminalReceiver>>;
}

interface AnsweredCall {
  callId: string;
  dialled: parts.Dialled;
  token: string;
}

/** What one measured batch of requests gave: every latency, and CPU per counted response (ms). */
interface Measured {
  samples: number[];
  responses: number;
  serverCpuMs: number;
  databaseCpuMs: number;
  sendLagMax: number;
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`agent-result: ${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T, R>(items: T[], width: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return out;
}

async function send(side: Side, request: PreparedRequest): Promise<Response> {
  return fetch(`http://127.0.0.1:${side.service.port}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
}

/** `count` calls triggered round robin over the side's accounts, dialled through the stand-in and answered. */
async function answeredCalls(side: Side, peers: Peers, count: number): Promise<AnsweredCall[]> {
  const ids = await inParallel(Array.from({ length: count }), 16, async (_, i) => {
    const response = await fetch(`http://127.0.0.1:${side.service.port}/api/v1/calls/trigger`, {
      method: 'POST',
      headers: {
        ...HTTPS,
        'content-type': 'application/json',
        authorization: `Bearer ${side.tenants[i % side.tenants.length]!.key}`,
      },
      body: JSON.stringify({ phone_number: '+14155552671', name: 'Ada Lovelace', metadata: { crm_id: `L-${i}` } }),
    });
    if (response.status !== 200) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { call_id: string }).call_id;
  });
  await until(`${count} calls dialled`, () => ids.every((id) => peers.standIn.dialled.has(id)), 120_000);
  const calls = ids.map((callId) => ({
    callId,
    dialled: peers.standIn.dialled.get(callId)!,
    token: signContextToken(side.key, { callId, attempt: 1, now: new Date() }),
  }));
  await inParallel(calls, 16, async (call) => {
    const response = await send(side, parts.statusCallback(call.callId, call.dialled, 'in-progress'));
    if (response.status !== 204) throw new Error(`in-progress callback answered ${response.status}`);
  });
  const answered = async () => {
    const { rows } = await side.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM calls WHERE id = ANY($1::uuid[]) AND status = 'in_progress'`,
      [ids],
    );
    return rows[0]!.n === count;
  };
  await until(`${count} calls in progress`, answered, 60_000);
  return calls;
}

/** The requests sent open loop at RATE, the CPU they cost the side's service and its database. */
async function measureRequests(side: Side, requests: PreparedRequest[], expectStatus: number, label: string) {
  const before = cpuSnapshot(side.service.pid, side.service.database);
  const result = await parts.runPreparedProcess({
    url: `http://127.0.0.1:${side.service.port}`,
    rate: RATE,
    connections: CONNECTIONS,
    expectStatus,
    requests,
  });
  const used = cpuSince(before, side.service.pid, side.service.database);
  const counted = result.statuses[String(expectStatus)] ?? 0;
  if (counted !== requests.length || result.errors > 0 || result.timeouts > 0)
    throw new Error(
      `${label}: expected ${requests.length} x ${expectStatus}, got ${JSON.stringify(result.statuses)} (${result.errors} errors, ${result.timeouts} timeouts)`,
    );
  return { result, used, counted };
}

const perResponse = (seconds: number, responses: number) =>
  Math.round(((seconds * 1000) / Math.max(1, responses)) * 1000) / 1000;

async function measureEndpoint(side: Side, requests: PreparedRequest[], label: string): Promise<Measured> {
  const { result, used, counted } = await measureRequests(side, requests, 200, label);
  return {
    samples: result.latencies.filter((l): l is number => l !== null),
    responses: counted,
    serverCpuMs: perResponse(used.service, counted),
    databaseCpuMs: perResponse(used.database, counted),
    sendLagMax: result.sendLag.max,
  };
}

async function nonePending(side: Side): Promise<boolean> {
  const { rows } = await side.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return rows[0]!.n === 0;
}

/** Each call's signed `completed` callback at RATE; latency from its intended send time to its call.completed. */
async function measureHangUps(side: Side, peers: Peers, calls: AnsweredCall[], withResult: boolean) {
  const requests = calls.map((c) => parts.statusCallback(c.callId, c.dialled, 'completed', { CallDuration: '42' }));
  // Both sides hang up from the same state: nothing pending (the calls' call.started delivered), then a quiet second.
  await until('no pending deliveries', () => nonePending(side), 120_000);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const before = cpuSnapshot(side.service.pid, side.service.database);
  const { result } = await measureRequests(side, requests, 204, `${side.name} hang-ups`);
  const arrived = () => calls.every((c) => peers.receiver.terminal.has(c.callId));
  await until(`${calls.length} terminal events`, arrived, (WAIT_SECONDS + 60) * 1000).catch((e: Error) =>
    log(e.message),
  );
  const used = cpuSince(before, side.service.pid, side.service.database);
  const samples: number[] = [];
  let wrong = 0;
  calls.forEach((c, i) => {
    const arrival = peers.receiver.terminal.get(c.callId);
    if (!arrival) return;
    samples.push(arrival.at - result.due[i]!);
    if (arrival.type !== 'call.completed' || arrival.withResult !== withResult) wrong++;
  });
  await waitIdle(side.db, 120_000);
  const measured: Measured = {
    samples,
    responses: samples.length,
    serverCpuMs: perResponse(used.service, samples.length),
    databaseCpuMs: perResponse(used.database, samples.length),
    sendLagMax: result.sendLag.max,
  };
  // The callback's own answer (the transition; the event goes after it), from its intended send time.
  const callback = percentiles(result.latencies.filter((l): l is number => l !== null));
  return { ...measured, callback, missing: calls.length - samples.length, wrong };
}

type HangUps = Awaited<ReturnType<typeof measureHangUps>>;

interface ResultRound {
  context: Measured;
  result: Measured;
  hangUps: HangUps;
}

async function resultRound(side: Side, peers: Peers, count: number): Promise<ResultRound> {
  const calls = await answeredCalls(side, peers, count);
  const context = await measureEndpoint(
    side,
    calls.map((c) => parts.contextRequest(c.callId, c.token)),
    'GET context',
  );
  const result = await measureEndpoint(
    side,
    calls.map((c, i) => parts.resultRequest(c.callId, c.token, i)),
    'POST result',
  );
  const hangUps = await measureHangUps(side, peers, calls, true);
  return { context, result, hangUps };
}

async function noWaitRound(side: Side, peers: Peers, count: number): Promise<HangUps> {
  return measureHangUps(side, peers, await answeredCalls(side, peers, count), false);
}

/** The side's service and database CPU over QUIET_SECONDS with nothing sent, in ms a second. */
async function quietCpu(side: Side): Promise<{ server: number; database: number }> {
  await waitIdle(side.db, 120_000);
  const before = cpuSnapshot(side.service.pid, side.service.database);
  await new Promise((r) => setTimeout(r, QUIET_SECONDS * 1000));
  const used = cpuSince(before, side.service.pid, side.service.database);
  const perSecond = (s: number) => Math.round((s * 1000 * 10) / QUIET_SECONDS) / 10;
  return { server: perSecond(used.service), database: perSecond(used.database) };
}

const brief = (p: Percentiles) => `p50 ${p.p50}, p90 ${p.p90}, p99 ${p.p99}, max ${p.max} ms (${p.count})`;

/** Pooled latencies, CPU per response over every round (total CPU over total responses). */
function summarize(rounds: Measured[]) {
  const responses = rounds.reduce((n, r) => n + r.responses, 0);
  const cpu = (pick: (r: Measured) => number) =>
    Math.round((rounds.reduce((s, r) => s + pick(r) * r.responses, 0) / Math.max(1, responses)) * 1000) / 1000;
  const latency = pooled(rounds.map((r) => r.samples));
  const { rounds: each, ...figures } = latency;
  return {
    ...figures,
    roundsP50P99: each.map((r) => [r.p50, r.p99]),
    serverCpuMs: cpu((r) => r.serverCpuMs),
    databaseCpuMs: cpu((r) => r.databaseCpuMs),
    sendLagMax: Math.max(...rounds.map((r) => r.sendLagMax)),
  };
}

async function main() {
  const startedAt = Date.now();
  fs.mkdirSync(LOG_DIR, { recursive: true });
  if (!env.BENCH_SKIP_BUILD) {
    log('npm run build');
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('build failed');
  }
  const cleanup: (() => Promise<void>)[] = [];
  let cleaning: Promise<void> | null = null;
  const runCleanup = () =>
    (cleaning ??= (async () => {
      while (cleanup.length > 0) await cleanup.pop()!().catch((error: Error) => log(`cleanup: ${error.message}`));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void runCleanup().finally(() => process.exit(130));
    });
  try {
    const postgres = await benchPostgres(log);
    cleanup.push(() => postgres.stop());
    const machine = await machineFacts(postgres.adminUrl, REDIS_URL);
    const loadBefore = loadAverage();
    log(
      `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres}; load ${loadBefore}`,
    );
    const standIn = await parts.startTwilioStandIn();
    cleanup.push(() => standIn.close());
    const receiver = await parts.startTerminalReceiver();
    cleanup.push(() => receiver.close());
    const peers: Peers = { standIn, receiver };
    const serviceEnv = acceptingEnv(REDIS_URL, {
      DIALER: 'twilio',
      TWILIO_ACCOUNT_SID: parts.ACCOUNT_SID,
      TWILIO_AUTH_TOKEN: parts.AUTH_TOKEN,
      TWILIO_API_BASE_URL: standIn.url,
      PUBLIC_BASE_URL: parts.PUBLIC_BASE_URL,
      AGENT_STREAM_URL: 'wss://agent.bench.example.com/stream',
    });
    const side = async (name: Side['name'], waitSeconds: number): Promise<Side> => {
      const database = await freshDatabase(postgres.adminUrl, name.replace('-', ''));
      cleanup.push(() => database.drop());
      const tenants = await createTenants(database.url, TENANTS, receiver.url);
      const db = await connect(database.url);
      cleanup.push(() => db.end());
      // The service's key, stored before it starts (it keeps a stored one): the bench signs the runtime's tokens.
      const key = randomBytes(32);
      await db.query('INSERT INTO signing_keys (purpose, key, created_at) VALUES ($1, $2, now())', [
        CONTEXT_TOKEN_KEY_PURPOSE,
        key.toString('base64'),
      ]);
      const child = await startService({
        env: { ...serviceEnv, AGENT_RESULT_WAIT_SECONDS: String(waitSeconds), DATABASE_URL: database.url },
        logFile: path.join(LOG_DIR, `service-${name}.log`),
      });
      cleanup.push(() => child.stop());
      log(`${name}: ${database.name}, ${TENANTS} accounts, AGENT_RESULT_WAIT_SECONDS=${waitSeconds}`);
      return { name, service: { ...child, pid: child.process.pid!, database: database.name }, db, tenants, key };
    };
    const withResult = await side('result', WAIT_SECONDS);
    const noWait = await side('no-wait', 0);

    const warmUp = {
      result: await resultRound(withResult, peers, WARM_UP_CALLS),
      noWait: await noWaitRound(noWait, peers, WARM_UP_CALLS),
    };
    log(`warm-up (not in the figures): ${WARM_UP_CALLS} calls each`);
    // What each service costs doing nothing (its polling), in CPU ms a second: part of every CPU per request above.
    const quiet = { result: await quietCpu(withResult), noWait: await quietCpu(noWait) };
    log(`quiet services, CPU ms/s: ${JSON.stringify(quiet)}`);
    const results: ResultRound[] = [];
    const noWaits: HangUps[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // The result side first in odd rounds, the no-wait side in even ones: the host's drift falls on both alike.
      const a = async () => results.push(await resultRound(withResult, peers, CALLS));
      const b = async () => noWaits.push(await noWaitRound(noWait, peers, CALLS));
      if (round % 2) await a().then(b);
      else await b().then(a);
      const r = results.at(-1)!;
      log(
        `round ${round}: context p99 ${pooled([r.context.samples]).p99}, result p99 ${pooled([r.result.samples]).p99}, ` +
          `hang-up with result p50/p99 ${pooled([r.hangUps.samples]).p50}/${pooled([r.hangUps.samples]).p99}, ` +
          `no wait ${pooled([noWaits.at(-1)!.samples]).p50}/${pooled([noWaits.at(-1)!.samples]).p99} ms`,
      );
    }
    const figures = {
      context: summarize(results.map((r) => r.context)),
      result: summarize(results.map((r) => r.result)),
      hangUpWithResult: summarize(results.map((r) => r.hangUps)),
      hangUpNoWait: summarize(noWaits),
    };
    const round1 = (n: number) => Math.round(n * 10) / 10;
    const added = {
      p50: round1(figures.hangUpWithResult.p50 - figures.hangUpNoWait.p50),
      p99: round1(figures.hangUpWithResult.p99 - figures.hangUpNoWait.p99),
      rounds: results.map((r, i) => {
        const [w, n] = [pooled([r.hangUps.samples]), pooled([noWaits[i]!.samples])];
        return { p50: round1(w.p50 - n.p50), p99: round1(w.p99 - n.p99) };
      }),
    };
    const checks = {
      missing: [...results.map((r) => r.hangUps), ...noWaits].reduce((n, h) => n + h.missing, 0),
      wrongEvent: [...results.map((r) => r.hangUps), ...noWaits].reduce((n, h) => n + h.wrong, 0),
    };
    const table = [
      '| Figure | Latency (pooled) | Server CPU ms/req | PostgreSQL CPU ms/req |',
      '|---|---|---:|---:|',
      `| GET context | ${brief(figures.context)} | ${figures.context.serverCpuMs} | ${figures.context.databaseCpuMs} |`,
      `| POST result | ${brief(figures.result)} | ${figures.result.serverCpuMs} | ${figures.result.databaseCpuMs} |`,
      `| hang-up → call.completed, result in (wait ${WAIT_SECONDS} s) | ${brief(figures.hangUpWithResult)} | ${figures.hangUpWithResult.serverCpuMs} | ${figures.hangUpWithResult.databaseCpuMs} |`,
      `| hang-up → call.completed, no wait (0 s) | ${brief(figures.hangUpNoWait)} | ${figures.hangUpNoWait.serverCpuMs} | ${figures.hangUpNoWait.databaseCpuMs} |`,
      `| added latency (result in − no wait) | p50 ${added.p50}, p99 ${added.p99} ms; rounds ${added.rounds.map((r) => `${r.p50}/${r.p99}`).join(', ')} | – | – |`,
    ].join('\n');
    const report = {
      generatedAt: new Date().toISOString(),
      commit: serviceCommit(),
      durationSeconds: (Date.now() - startedAt) / 1000,
      machine,
      database: postgres.kind,
      loadAverage: { before: loadBefore, after: loadAverage() },
      settings: {
        rate: RATE,
        seconds: SECONDS,
        rounds: ROUNDS,
        calls: CALLS,
        warmUpCalls: WARM_UP_CALLS,
        tenants: TENANTS,
        waitSeconds: WAIT_SECONDS,
        connections: CONNECTIONS,
        service: serviceEnv,
      },
      figures,
      added,
      checks,
      quietCpuMsPerSecond: quiet,
      table,
      warmUp: { result: warmUp.result, noWait: warmUp.noWait },
      rounds: { result: results, noWait: noWaits },
    };
    fs.mkdirSync(path.dirname(OUT_FILE), { recursive: true });
    fs.writeFileSync(OUT_FILE, `${JSON.stringify(report, null, 1)}\n`);
    process.stdout.write(
      `\n${table}\n\n${RATE}/s for ${SECONDS} s, ${ROUNDS} rounds of ${CALLS} calls a side; terminal events missing ${checks.missing}, ` +
        `of the wrong kind ${checks.wrongEvent}; quiet services ${quiet.result.server} + ${quiet.result.database} and ${quiet.noWait.server} + ${quiet.noWait.database} CPU ms/s; load average ${loadBefore} before, ${loadAverage()} after. Written to ${OUT_FILE}\n`,
    );
  } finally {
    await runCleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`agent-result failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
