// The agent-result bench's load generator, in its own process (bench/agent-result.ts forks it): prepared requests,
// each with its own path, headers and body (a call's token, a call's signed callback), sent open loop at a fixed
// rate; each latency counts from the request's intended send time, as bench/load.ts's open loop does.
import http from 'node:http';
import { openLoop, wallNow } from './load.js';
import { percentiles } from './stats.js';

export interface PreparedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PreparedSpec {
  url: string;
  /** Requests per second: request i is due at start + i/rate whatever the answers before it. */
  rate: number;
  /** At most this many sockets; requests beyond wait for one (and their wait counts). */
  connections: number;
  /** The status that counts (its latency recorded); any other is reported. */
  expectStatus: number;
  requests: PreparedRequest[];
}

export interface PreparedResult {
  seconds: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Per request, in order: its intended send time (wall-clock ms, comparable across processes on one machine). */
  due: number[];
  /** Per request: ms from its intended send time to the response's last byte; null unless it had expectStatus. */
  latencies: (number | null)[];
  /** How late the generator itself sent (ms past the intended time). */
  sendLag: { p99: number; max: number };
}

export async function runPrepared(spec: PreparedSpec): Promise<PreparedResult> {
  const target = new URL(spec.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const total = spec.requests.length;
  const interval = 1000 / spec.rate;
  const due: number[] = new Array<number>(total).fill(0);
  const latencies: (number | null)[] = new Array<number | null>(total).fill(null);
  const lags: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  let settled = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    if (++settled === total) finish();
  };
  if (total === 0) finish();
  const send = (i: number, at: number) => {
    const prepared = spec.requests[i]!;
    const headers: Record<string, string | number> = { ...prepared.headers };
    if (prepared.body !== undefined) headers['content-length'] = Buffer.byteLength(prepared.body);
    due[i] = at;
    lags.push(wallNow() - at);
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: prepared.path,
        method: prepared.method,
        headers,
        agent,
        timeout: 30_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === spec.expectStatus) latencies[i] = wallNow() - at;
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
    request.end(prepared.body);
  };
  const started = openLoop(total, interval, send);
  await done;
  const seconds = (wallNow() - started) / 1000;
  agent.destroy();
  const lag = percentiles(lags);
  return { seconds, statuses, errors, timeouts, due, latencies, sendLag: { p99: lag.p99, max: lag.max } };
}

// As a child process: one spec in over IPC, one result out, then exit.
if (process.send) {
  process.once('message', (spec: PreparedSpec) => {
    runPrepared(spec).then(
      (result) => process.send!({ ok: true, result }, () => process.exit(0)),
      (error: Error) => process.send!({ ok: false, error: error.stack ?? String(error) }, () => process.exit(1)),
    );
  });
}
