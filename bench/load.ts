// The load generator, in its own process (so it never shares the service's or the bench runner's event loop): closed
// loop with autocannon (peaks, refusals), or open loop at a fixed rate with latencies from each request's intended
// send time; reports throughput, latency percentiles and, on request, the intended send time of each call.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';
import { percentiles, type Percentiles } from './stats.js';

export interface LoadSpec {
  /** Several targets (replicas): closed loop gives connection i to url[i % n]; open loop sends request i to url[i % n]. */
  url: string | string[];
  path: string;
  /** Headers on every request; Authorization is added from `keys` when given. */
  headers: Record<string, string>;
  body: string;
  /** Each request takes the next key (round robin), or one drawn by `zipf`. */
  keys?: string[];
  /**
   * A skewed share of the load: request i takes key k (rank k+1) with probability proportional to 1/(k+1)^zipf, from
   * a seeded generator (the same sequence every run). Unset: round robin.
   */
  zipf?: number;
  /** A new `Idempotency-Key` (a UUID) on every request. */
  idempotencyKeys?: boolean;
  /** Closed loop: the connections; open loop (`rate`): at most this many sockets (requests beyond wait for one). */
  connections: number;
  durationSeconds: number;
  /**
   * Open loop at this overall rate (requests/s): request i is due at start + i/rate whatever the answers before it,
   * and its latency counts from that intended send time (coordinated omission corrected). Unset: closed loop
   * (autocannon, as fast as the connections go).
   */
  rate?: number;
  /** The status that counts as throughput (200 for accepted triggers, 429 or 401 for refusals). */
  expectStatus: number;
  /** Report the intended send time of every accepted call by call_id (trigger-to-webhook latency). */
  recordCalls?: boolean;
}

export interface LoadResult {
  durationSeconds: number;
  /** Responses with the expected status per second. */
  throughput: number;
  /** Requests per second actually sent (for paced runs: did the generator keep up?). */
  sentPerSecond: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /**
   * Milliseconds, expected status only: closed loop from writing the request to the last byte of the response; open
   * loop from the request's intended send time to the last byte of the response.
   */
  latency: Percentiles;
  /** Open loop: every expected-status latency (ms), so that rounds can be pooled. */
  samples?: number[];
  /** Open loop: how late the generator itself sent (ms from the intended time to the request's start), its p99 and max. */
  sendLag?: { p99: number; max: number };
  calls?: [callId: string, sentAtMs: number][];
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const wallNow = () => performance.timeOrigin + performance.now();

/** A small seeded generator (mulberry32): the same key sequence in every run and round. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks key indexes: round robin, or Zipf-distributed over the ranks (index 0 the busiest). */
export function keyPicker(count: number, zipf?: number, seed = 25): () => number {
  if (zipf === undefined) {
    let next = 0;
    return () => next++ % count;
  }
  const cumulative = new Float64Array(count);
  let total = 0;
  for (let k = 0; k < count; k++) cumulative[k] = total += 1 / (k + 1) ** zipf;
  const random = seeded(seed);
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The share of the load the busiest `n` ranks get under Zipf with exponent `s` over `count` keys. */
export function zipfShare(count: number, s: number, rank: number): number {
  let total = 0;
  for (let k = 1; k <= count; k++) total += 1 / k ** s;
  return 1 / rank ** s / total;
}

/**
 * Open loop: request `i` is sent at its intended time, `started + i * interval` ms, whatever happened before it
 * (`send` gets that time, from which its latency counts). Starts 20 ms from now; returns that start.
 */
export function openLoop(total: number, interval: number, send: (i: number, due: number) => void): number {
  const started = wallNow() + 20;
  let next = 0;
  const tick = () => {
    const now = wallNow();
    while (next < total && started + next * interval <= now) {
      send(next, started + next * interval);
      next++;
    }
    if (next < total) setTimeout(tick, Math.max(0, started + next * interval - wallNow()));
  };
  setTimeout(tick, 20);
  return started;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return spec.rate ? runOpenLoop(spec, spec.rate) : runClosedLoop(spec);
}

/**
 * Open loop: request i is sent at its intended time start + i/rate (a timer that catches up if it falls behind),
 * over a keep-alive pool of at most `connections` sockets; its latency is measured from that intended time, so a
 * stall anywhere (the service, the machine, this generator) shows in the latencies of every request it delayed.
 */
async function runOpenLoop(spec: LoadSpec, rate: number): Promise<LoadResult> {
  const urls = (Array.isArray(spec.url) ? spec.url : [spec.url]).map((u) => new URL(u));
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const total = Math.max(1, Math.round(rate * spec.durationSeconds));
  const interval = 1000 / rate;
  const pick = spec.keys?.length ? keyPicker(spec.keys.length, spec.zipf) : null;
  const latencies: number[] = [];
  const lags: number[] = [];
  const calls: [string, number][] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  let sent = 0;
  let settled = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    if (++settled === total) finish();
  };
  const send = (i: number, due: number) => {
    const target = urls[i % urls.length]!;
    const headers: Record<string, string | number> = {
      ...spec.headers,
      'content-length': Buffer.byteLength(spec.body),
    };
    if (pick) headers.authorization = `Bearer ${spec.keys![pick()]}`;
    if (spec.idempotencyKeys) headers['idempotency-key'] = randomUUID();
    lags.push(wallNow() - due);
    sent++;
    const request = http.request(
      { host: target.hostname, port: target.port, path: spec.path, method: 'POST', headers, agent, timeout: 10_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          const latency = wallNow() - due;
          const status = response.statusCode ?? 0;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === spec.expectStatus) latencies.push(latency);
          if (spec.recordCalls && status === 200)
            calls.push([(JSON.parse(Buffer.concat(chunks).toString()) as { call_id: string }).call_id, due]);
          settle();
        });
        response.on('error', () => {
          errors++;
          settle();
        });
      },
    );
    request.on('timeout', () => {
      timeouts++;
      request.destroy(new Error('timeout'));
    });
    request.on('error', () => {
      errors++;
      settle();
    });
    request.end(spec.body);
  };
  const started = openLoop(total, interval, send);
  await done;
  const seconds = (wallNow() - started) / 1000;
  agent.destroy();
  const lag = percentiles(lags);
  return {
    durationSeconds: seconds,
    throughput: (statuses[String(spec.expectStatus)] ?? 0) / seconds,
    sentPerSecond: sent / spec.durationSeconds,
    statuses,
    errors,
    timeouts,
    latency: percentiles(latencies),
    samples: latencies,
    sendLag: { p99: lag.p99, max: lag.max },
    ...(spec.recordCalls ? { calls } : {}),
  };
}

// The fields of autocannon's (internal, version-pinned) Client that recording touches.
interface AcClient {
  requestIterator: { recordBody(req: unknown, status: number, body: string, headers: unknown): void };
  on(event: string, listener: (...args: never[]) => void): void;
}

/** Closed loop: autocannon, `connections` at once, each sending its next request when the last one is answered. */
async function runClosedLoop(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  const calls: [string, number][] = [];
  const pick = spec.keys?.length ? keyPicker(spec.keys.length, spec.zipf) : null;

  const setupClient = (client: AcClient) => {
    client.on('response', (status: number, _bytes: number, ms: number) => {
      if (status === spec.expectStatus) latencies.push(ms);
    });
    if (spec.recordCalls) {
      let sentAt = 0;
      client.on('request', () => {
        sentAt = wallNow();
      });
      const iterator = client.requestIterator;
      const recordBody = iterator.recordBody.bind(iterator);
      iterator.recordBody = (req, status, body, headers) => {
        if (status === 200) calls.push([(JSON.parse(body) as { call_id: string }).call_id, sentAt]);
        recordBody(req, status, body, headers);
      };
    }
  };

  const started = wallNow();
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSeconds,
    timeout: 10,
    setupClient: setupClient as unknown as autocannon.Options['setupClient'],
    requests: [
      {
        method: 'POST',
        path: spec.path,
        headers: spec.headers,
        body: spec.body,
        ...(pick || spec.idempotencyKeys
          ? {
              setupRequest: (request: autocannon.Request) => {
                const headers: Record<string, string> = { ...request.headers };
                if (pick) headers.authorization = `Bearer ${spec.keys![pick()]}`;
                if (spec.idempotencyKeys) headers['idempotency-key'] = randomUUID();
                return { ...request, headers };
              },
            }
          : {}),
      },
    ],
  });
  const seconds = (wallNow() - started) / 1000;
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats as Record<string, { count: number }>))
    statuses[code] = count;
  return {
    durationSeconds: seconds,
    throughput: (statuses[String(spec.expectStatus)] ?? 0) / seconds,
    sentPerSecond: result.requests.total / seconds,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    latency: percentiles(latencies),
    ...(spec.recordCalls ? { calls } : {}),
  };
}

// As a child process: one spec in over IPC, one result out, then exit.
if (process.send) {
  process.once('message', (spec: LoadSpec) => {
    runLoad(spec).then(
      (result) => process.send!({ ok: true, result }, () => process.exit(0)),
      (error: Error) => process.send!({ ok: false, error: error.stack ?? String(error) }, () => process.exit(1)),
    );
  });
}
