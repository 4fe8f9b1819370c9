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
import { createPendingDeliveries, waitIdle, type Tenant } from './setup.js';
import { startedBreakdown, type Breakdown } from './started-breakdown.js';
import { percentiles, type Percentiles } from './stats.js';

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
  latencyRate: number;
  latencySeconds: number;
  deliveries: number;
}

export interface LoadFigures {
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
}

const figures = (r: LoadResult): LoadFigures => ({
  throughput: Math.round(r.throughput),
  p50: r.latency.p50,
  p90: r.latency.p90,
  p99: r.latency.p99,
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

/** A fixed rate, spread evenly over each second by staggered connections. */
export async function acceptedPaced(
  port: number,
  tenants: Tenant[],
  rate: number,
  s: Settings,
): Promise<LoadFigures & { rate: number; achieved: number }> {
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
  return { ...figures(result), rate, achieved: Math.round(result.sentPerSecond) };
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

/** Trigger sent -> its call.started received, at a fixed rate with zero ring time. */
export async function startedLatency(
  port: number,
  tenants: Tenant[],
  receiver: Receiver,
  db: pg.Client,
  s: Settings,
  options = { waitIdle: true },
): Promise<{ latency: Percentiles & { calls: number; missing: number }; breakdown: Breakdown }> {
  receiver.started.clear();
  receiver.watchStarted = true;
  try {
    const result = await runLoadProcess(
      spec(port, {
        keys: tenants.map((t) => t.key),
        connections: s.latencyRate,
        durationSeconds: s.latencySeconds,
        rate: s.latencyRate,
        expectStatus: 200,
        recordCalls: true,
      }),
    );
    checkStatuses('started latency', result, 200);
    const calls = result.calls ?? [];
    const deadline = Date.now() + 15_000;
    while (calls.some(([id]) => !receiver.started.has(id)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const arrived = calls
      .filter(([id]) => receiver.started.has(id))
      .map(([id, sentAt]) => [sentAt, receiver.started.get(id)! - sentAt] as const);
    const latencies = arrived.map(([, latency]) => latency);
    // Diagnostic (BENCH_SAMPLES_DIR): each call's send time and latency, to see whether the slow ones come together.
    if (process.env.BENCH_SAMPLES_DIR) {
      const samples = arrived.map(([sentAt, latency]) => [Math.round(sentAt), Math.round(latency * 10) / 10]);
      fs.writeFileSync(path.join(process.env.BENCH_SAMPLES_DIR, `started-${Date.now()}.json`), JSON.stringify(samples));
    }
    if (options.waitIdle) await waitIdle(db);
    const breakdown = await startedBreakdown(db, calls, receiver.started);
    return {
      latency: { ...percentiles(latencies), calls: calls.length, missing: calls.length - latencies.length },
      breakdown,
    };
  } finally {
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
