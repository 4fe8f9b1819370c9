// The load generator: runs one autocannon job in its own process (so it never shares the service's or the bench
// runner's event loop) and reports throughput, latency percentiles and, on request, the send time of each call.
import autocannon from 'autocannon';
import { percentiles, type Percentiles } from './stats.js';

export interface LoadSpec {
  /** Several targets (replicas): autocannon gives connection i to url[i % n]. */
  url: string | string[];
  path: string;
  /** Headers on every request; Authorization is added from `keys` when given. */
  headers: Record<string, string>;
  body: string;
  /** Each request takes the next key (round robin across all connections). */
  keys?: string[];
  connections: number;
  durationSeconds: number;
  /** Fixed overall rate (requests/s); unset = as fast as the connections go (closed loop). */
  rate?: number;
  /** The status that counts as throughput (200 for accepted triggers, 429 or 401 for refusals). */
  expectStatus: number;
  /** Report the send time of every accepted call by call_id (trigger-to-webhook latency). */
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
  /** Milliseconds, from writing the request to the last byte of the response, expected status only. */
  latency: Percentiles;
  calls?: [callId: string, sentAtMs: number][];
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const wallNow = () => performance.timeOrigin + performance.now();

// The fields of autocannon's (internal, version-pinned) Client that pacing and recording touch.
interface AcClient {
  rate?: number;
  paused?: boolean;
  destroyed: boolean;
  reqsMadeThisSecond: number;
  rateInterval?: NodeJS.Timeout;
  requestIterator: { recordBody(req: unknown, status: number, body: string, headers: unknown): void };
  _doRequest(): void;
  on(event: string, listener: (...args: never[]) => void): void;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  const calls: [string, number][] = [];
  let next = 0;
  let index = 0;
  const connections = spec.rate ? Math.min(spec.connections, spec.rate) : spec.connections;

  const setupClient = (client: AcClient) => {
    const i = index++;
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
    if (spec.rate) {
      // autocannon refills every connection's per-second quota on timers started together, so all connections
      // burst at the top of each second and the run is really "flat out for 80% of each second". Offsetting
      // each connection's refill by i/connections of a second spreads the sends evenly over the second.
      client.reqsMadeThisSecond = Number.POSITIVE_INFINITY; // no sends before its first refill
      setTimeout(
        () => {
          if (client.destroyed) return;
          clearInterval(client.rateInterval);
          const refill = () => {
            client.reqsMadeThisSecond = 0;
            if (client.paused) {
              client.paused = false;
              client._doRequest();
            }
          };
          refill();
          client.rateInterval = setInterval(refill, 1000);
        },
        Math.round((i / connections) * 1000),
      ).unref();
    }
  };

  const started = wallNow();
  const result = await autocannon({
    url: spec.url,
    connections,
    duration: spec.durationSeconds,
    ...(spec.rate ? { overallRate: spec.rate, ignoreCoordinatedOmission: true } : {}),
    timeout: 10,
    setupClient: setupClient as unknown as autocannon.Options['setupClient'],
    requests: [
      {
        method: 'POST',
        path: spec.path,
        headers: spec.headers,
        body: spec.body,
        ...(spec.keys?.length
          ? {
              setupRequest: (request: autocannon.Request) => {
                const key = spec.keys![next++ % spec.keys!.length];
                return { ...request, headers: { ...request.headers, authorization: `Bearer ${key}` } };
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
