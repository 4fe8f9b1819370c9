// The measured scenarios: accepted triggers against the baseline, a fixed-rate latency run, refusals (429, 401),
// trigger-to-call.started latency, and the webhook drain rate. Each returns one run's numbers.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { generateApiKey } from '../src/domain/api-key.js';
import type { LoadResult, LoadSpec } from './load.js';
import { cpuSince, cpuSnapshot } from './cpu.js';
import { runLoadProcess } from './processes.js';
import type { Receiver } from './receiver.js';
import { sampleMachine, type Sampler } from './machine-load.js';
import { createPendingDeliveries, isIdle, waitIdle, type Tenant } from './setup.js';
import { startedCalls, type StartedCalls } from './started-breakdown.js';

export const TRIGGER_PATH = '/api/v1/calls/trigger';
export const TRIGGER_BODY = JSON.stringify({
  phone_number: '+14155552671',
  name: 'Ada Lovelace',
  metadata: { crm_id: 'L-42' },
});
// TLS_MODE=proxy: the listener is plain HTTP and the service insists on being told the client spoke https.
const HEADERS = { 'content-type': 'application/json', 'x-forwarded-proto': 'https' };
/** The 401 scenario's client address (a documentation range): its failure counter is nobody else's. */
export const BENCH_CLIENT_IP = '203.0.113.7';

export interface Settings {
  connections: number;
  pacedConnections: number;
  peakSeconds: number;
  pacedSeconds: number;
  refusalSeconds: number;
  /** (d) and (f): triggers per second. */
  latencyRate: number;
  /** (f): seconds per round. */
  latencySeconds: number;
  /** (d): seconds of steady state per round. */
  steadySeconds: number;
  /** (d): accounts, and the Zipf exponent of their shares of the load. */
  startedAccounts: number;
  zipf: number;
  deliveries: number;
}

export interface LoadFigures {
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const figures = (r: LoadResult): LoadFigures => ({
  throughput: Math.round(r.throughput),
  p50: r.latency.p50,
  p90: r.latency.p90,
  p99: r.latency.p99,
  max: r.latency.max,
});

/** A server under test: its port, and what to charge CPU to (its process, the backends of its database). */
export interface Server {
  port: number;
  pid: number;
  database: string;
}

/** Runs `work` and adds the CPU it cost the server and its database, in ms per counted response. */
export async function withCpu<T extends LoadFigures>(
  target: Server,
  seconds: number,
  work: () => Promise<T>,
): Promise<T & { serverCpuMs: number; databaseCpuMs: number }> {
  const before = cpuSnapshot(target.pid, target.database);
  const result = await work();
  const used = cpuSince(before, target.pid, target.database);
  const responses = Math.max(1, result.throughput * seconds);
  const perResponse = (s: number) => Math.round(((s * 1000) / responses) * 1000) / 1000;
  return { ...result, serverCpuMs: perResponse(used.service), databaseCpuMs: perResponse(used.database) };
}

function spec(
  port: number,
  extra: Partial<LoadSpec> & Pick<LoadSpec, 'connections' | 'durationSeconds' | 'expectStatus'>,
): LoadSpec {
  return { url: `http://127.0.0.1:${port}`, path: TRIGGER_PATH, headers: HEADERS, body: TRIGGER_BODY, ...extra };
}

/** Fails loudly when a run answered with anything but the status it is meant to measure. */
function checkStatuses(label: string, result: LoadResult, expected: number, tolerated = 0) {
  const other = Object.entries(result.statuses)
    .filter(([code]) => code !== String(expected))
    .reduce((n, [, c]) => n + c, 0);
  if (other > tolerated || result.errors > 0) {
    throw new Error(
      `${label}: expected only ${expected}, got ${JSON.stringify(result.statuses)} (${result.errors} connection errors)`,
    );
  }
}

/** Closed loop: as fast as `connections` go, rotating over every tenant's key. */
export async function acceptedPeak(
  port: number,
  tenants: Tenant[],
  s: Settings,
  seconds = s.peakSeconds,
): Promise<LoadFigures> {
  const result = await runLoadProcess(
    spec(port, {
      keys: tenants.map((t) => t.key),
      connections: s.connections,
      durationSeconds: seconds,
      expectStatus: 200,
    }),
  );
  checkStatuses('accepted', result, 200);
  return figures(result);
}

/** The baseline server: same connections, same body, no key. */
export async function baselinePeak(port: number, s: Settings, seconds = s.peakSeconds): Promise<LoadFigures> {
  const result = await runLoadProcess(
    spec(port, { connections: s.connections, durationSeconds: seconds, expectStatus: 200 }),
  );
  checkStatuses('baseline', result, 200);
  return figures(result);
}

/** Open loop at a fixed rate: latency from each request's intended send time; the samples for pooling. */
export async function acceptedPaced(
  port: number,
  tenants: Tenant[],
  rate: number,
  s: Settings,
): Promise<LoadFigures & { rate: number; achieved: number; samples: number[]; sendLagMax: number }> {
  const result = await runLoadProcess(
    spec(port, {
      keys: tenants.map((t) => t.key),
      connections: s.pacedConnections,
      durationSeconds: s.pacedSeconds,
      rate,
      expectStatus: 200,
    }),
  );
  checkStatuses('paced', result, 200);
  return {
    ...figures(result),
    rate,
    achieved: Math.round(result.sentPerSecond),
    samples: result.samples ?? [],
    sendLagMax: result.sendLag?.max ?? 0,
  };
}

/** One key past its per-minute limit: its first `limit` requests this window are spent by a warm-up first. */
export async function rateLimited(port: number, tenant: Tenant, s: Settings): Promise<LoadFigures> {
  const result = await runLoadProcess(
    spec(port, {
      keys: [tenant.key],
      connections: s.connections,
      durationSeconds: s.refusalSeconds,
      expectStatus: 429,
    }),
  );
  // A one-minute window may roll over during a run and let its first `limit` requests through again.
  checkStatuses('rate limited', result, 429, 200);
  return figures(result);
}

/**
 * Well-formed keys (valid checksum) that no account has, sent again and again (a client retrying wrong keys): the
 * first use of each costs the key lookup, later ones are answered from the service's memory of invalid keys; every
 * one costs the failure counter. `distinct`: a new key for every request instead (nothing remembered helps).
 */
export async function unauthenticated(port: number, s: Settings, distinct = false): Promise<LoadFigures> {
  // More distinct keys than requests a run can send: none is seen twice.
  const keys = Array.from({ length: distinct ? 60_000 : 100 }, () => generateApiKey().key);
  const headers = { ...HEADERS, 'x-forwarded-for': BENCH_CLIENT_IP };
  const result = await runLoadProcess(
    spec(port, { keys, headers, connections: s.connections, durationSeconds: s.refusalSeconds, expectStatus: 401 }),
  );
  checkStatuses('unauthenticated', result, 401);
  return figures(result);
}

export interface StartedOptions {
  rate: number;
  seconds: number;
  /** Keys drawn with this Zipf exponent (index 0 the busiest); unset: round robin. */
  zipf?: number;
  /** A new Idempotency-Key on every trigger. */
  idempotencyKeys?: boolean;
  /** The service's MAX_CONCURRENT_CALLS: a call with that many of its account's calls ahead waited for a slot. */
  maxConcurrent: number;
  /** Wait for the service to go idle afterwards (the default); (f) waits for its own callbacks instead. */
  waitIdle?: boolean;
}

export interface StartedRound {
  calls: number;
  missing: number;
  /** How late the load generator itself sent, at worst (ms): above a few ms, the generator was starved too. */
  sendLagMax: number;
  started: StartedCalls;
  machine: ReturnType<Sampler['stop']>;
}

/**
 * Triggers at a fixed rate (open loop), each measured from its intended send time to the receiver getting its
 * call.started, matched by call_id; waits for every call.started (queued calls start as slots free up), the
 * machine's load sampled meanwhile.
 */
export async function startedLatency(
  port: number,
  tenants: Tenant[],
  receiver: Receiver,
  db: pg.Client,
  o: StartedOptions,
): Promise<StartedRound> {
  receiver.started.clear();
  receiver.watchStarted = true;
  const machine = sampleMachine();
  let sampled: ReturnType<Sampler['stop']> | null = null;
  try {
    const result = await runLoadProcess(
      spec(port, {
        keys: tenants.map((t) => t.key),
        ...(o.zipf !== undefined ? { zipf: o.zipf } : {}),
        idempotencyKeys: o.idempotencyKeys ?? false,
        connections: Math.max(8, o.rate),
        durationSeconds: o.seconds,
        rate: o.rate,
        expectStatus: 200,
        recordCalls: true,
      }),
    );
    checkStatuses('started latency', result, 200);
    const calls = result.calls ?? [];
    // Every call.started, or the service idle (nothing left to start) for 15 s: what has not arrived by then is missing.
    let idleSince = Number.POSITIVE_INFINITY;
    const deadline = Date.now() + 60 * 60_000;
    while (calls.some(([id]) => !receiver.started.has(id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      if (!(await isIdle(db))) idleSince = Number.POSITIVE_INFINITY;
      else if (idleSince === Number.POSITIVE_INFINITY) idleSince = Date.now();
      else if (Date.now() - idleSince > 15_000) break;
    }
    sampled = machine.stop();
    // Diagnostic (BENCH_SAMPLES_DIR): each call's intended send time and latency, to see whether slow ones bunch.
    if (process.env.BENCH_SAMPLES_DIR) {
      const samples = calls
        .filter(([id]) => receiver.started.has(id))
        .map(([id, sentAt]) => [Math.round(sentAt), Math.round((receiver.started.get(id)! - sentAt) * 10) / 10]);
      fs.writeFileSync(path.join(process.env.BENCH_SAMPLES_DIR, `started-${Date.now()}.json`), JSON.stringify(samples));
    }
    if (o.waitIdle ?? true) await waitIdle(db, 60 * 60_000);
    const started = await startedCalls(db, calls, receiver.started, o.maxConcurrent);
    const arrived = calls.filter(([id]) => receiver.started.has(id)).length;
    return {
      calls: calls.length,
      missing: calls.length - arrived,
      sendLagMax: result.sendLag?.max ?? 0,
      started,
      machine: sampled,
    };
  } finally {
    if (!sampled) machine.stop();
    receiver.watchStarted = false;
  }
}

/** Pre-created due deliveries, drained by the service's worker; deliveries per second as seen by the receiver. */
export async function webhookDrain(
  receiver: Receiver,
  db: pg.Client,
  s: Settings,
): Promise<{ deliveries: number; perSecond: number; seconds: number }> {
  await waitIdle(db);
  receiver.arrivals = [];
  const { ids, committedAt } = await createPendingDeliveries(db, s.deliveries);
  const expected = ids.size;
  receiver.awaited = ids;
  try {
    const deadline = Date.now() + 120_000;
    while (receiver.arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (receiver.arrivals.length < expected)
      throw new Error(`webhook drain: ${receiver.arrivals.length} of ${expected} arrived`);
    const seconds = (Math.max(...receiver.arrivals) - committedAt) / 1000;
    await waitIdle(db);
    return {
      deliveries: expected,
      perSecond: Math.round(expected / seconds),
      seconds: Math.round(seconds * 100) / 100,
    };
  } finally {
    receiver.awaited = null;
  }
}
