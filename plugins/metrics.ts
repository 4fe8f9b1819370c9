// Prometheus metrics for the internal listener's /metrics: HTTP, trigger outcomes, calls by status, dispatch latency and claim passes, webhook attempts,
// rows deleted by the retention job.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LIVE_STATUSES } from '../schemas/vocabulary.js';
import { withTimeout } from '../src/jobs/with-timeout.js';

const TRIGGER_ROUTE = '/api/v1/calls/trigger';
const CALLS_QUERY_TIMEOUT_MS = 1_000;

/**
 * A claim pass's buckets, 1 ms to 2.5 s, each at most a third above the one before it: a pass takes from a few
 * milliseconds (one account) to a few hundred (50 accounts' calls on a busy host), and a quantile read from the
 * histogram (histogram_quantile) is then within a third of a bucket wherever the passes fall (with 0.1, 0.15, 0.25,
 * 0.5 a p50 could move by 100 ms within one bucket).
 */
const CLAIM_PASS_BUCKETS = [
  1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 10, 12.5, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400,
  500, 600, 750, 1000, 1250, 1500, 2000, 2500,
].map((ms) => ms / 1000);

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export type Metrics = ReturnType<typeof createMetrics>;

function createMetrics(fastify: FastifyInstance) {
  // Per app, not prom-client's global registry: several apps in one process (tests, replicas) must not collide.
  const register = new Registry();
  collectDefaultMetrics({ register });

  const httpRequests = new Counter({
    name: 'oct_http_requests_total',
    help: 'HTTP requests on the API listener, by route pattern (never the raw URL), method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [register],
  });
  const httpDuration = new Histogram({
    name: 'oct_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response on the API listener.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [register],
  });
  const triggerOutcomes = new Counter({
    name: 'oct_trigger_outcomes_total',
    help: 'POST /api/v1/calls/trigger outcomes: accepted, replayed, or the error code that refused it.',
    labelNames: ['outcome'] as const,
    registers: [register],
  });
  const dispatchLatency = new Histogram({
    name: 'oct_dispatch_latency_seconds',
    help: 'Time from a call being accepted to dialling beginning (includes waiting for a slot or a calling window).',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400],
    registers: [register],
  });
  const dispatchPassDuration = new Histogram({
    name: 'oct_dispatch_pass_duration_seconds',
    help: 'Time of one dispatcher claim pass that had accounts to claim for (up to 50): finding them and the transaction claiming their due calls.',
    buckets: CLAIM_PASS_BUCKETS,
    registers: [register],
  });
  const webhookAttempts = new Counter({
    name: 'oct_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retry, gone (410), exhausted (last retry failed).',
    labelNames: ['outcome'] as const,
    registers: [register],
  });
  const webhookDuration = new Histogram({
    name: 'oct_webhook_attempt_duration_seconds',
    help: 'Duration of one webhook delivery attempt, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [register],
  });
  // The one count of store errors: the rate-limit plugin increments it.
  const rateLimitStoreErrors = new Counter({
    name: 'oct_rate_limit_store_errors_total',
    help: 'Rate-limit store (Redis) errors; each let a request through unlimited (fail open).',
    registers: [register],
  });

  // The retention job's (plugins/jobs.ts): rows deleted by table, cascades included, and its passes.
  const retentionRowsDeleted = new Counter({
    name: 'oct_retention_rows_deleted_total',
    help: "Rows deleted past their retention, by table (a call's events, deliveries and attempts counted in their own tables).",
    labelNames: ['table'] as const,
    registers: [register],
  });
  const retentionPasses = new Counter({
    name: 'oct_retention_passes_total',
    help: 'Retention passes by outcome: completed, limited (used its budget; the next pass goes on), skipped (another process was deleting), stopped (closing), failed.',
    labelNames: ['outcome'] as const,
    registers: [register],
  });

  const callCounts = liveCallCounts(fastify);
  const calls = new Gauge({
    name: 'oct_calls',
    help: `Calls by live status (${LIVE_STATUSES.join(', ')}), counted at scrape time.`,
    labelNames: ['status'] as const,
    registers: [register],
    async collect() {
      const counts = await callCounts();
      for (const status of LIVE_STATUSES) calls.set({ status }, counts[status]);
    },
  });
  const callsQueued = new Gauge({
    name: 'oct_calls_queued',
    help: 'Calls accepted and waiting to be dialled (status initiated).',
    registers: [register],
    async collect() {
      callsQueued.set((await callCounts()).initiated);
    },
  });
  const callsActive = new Gauge({
    name: 'oct_calls_active',
    help: 'Calls dialling or connected (status dialing or in_progress).',
    registers: [register],
    async collect() {
      const counts = await callCounts();
      callsActive.set(counts.dialing + counts.in_progress);
    },
  });

  return {
    register,
    httpRequests,
    httpDuration,
    triggerOutcomes,
    dispatchLatency,
    dispatchPassDuration,
    webhookAttempts,
    webhookDuration,
    rateLimitStoreErrors,
    retentionRowsDeleted,
    retentionPasses,
    calls,
    callsQueued,
    callsActive,
  };
}

type LiveCounts = Record<(typeof LIVE_STATUSES)[number], number>;

/**
 * The three call gauges collect concurrently during one scrape: they share one query in flight. A failed or slow
 * query keeps the last values, so a database problem shows in /health/ready, not as a broken scrape.
 */
function liveCallCounts(fastify: FastifyInstance): () => Promise<LiveCounts> {
  let last: LiveCounts = { initiated: 0, dialing: 0, in_progress: 0 };
  let inFlight: Promise<void> | null = null;
  let lastWarned = 0;

  const query = async () => {
    // Read at scrape time: the concurrency plugin registers after this one.
    last = await fastify.concurrency.totals();
  };

  return async () => {
    // A query still running from an earlier timed-out scrape is awaited, not joined by another one.
    inFlight ??= query().finally(() => {
      inFlight = null;
    });
    try {
      await withTimeout(inFlight, CALLS_QUERY_TIMEOUT_MS);
    } catch (error) {
      if (Date.now() - lastWarned > 60_000) {
        lastWarned = Date.now();
        fastify.log.warn({ err: error }, 'metrics: counting calls failed; reporting the last values');
      }
    }
    return last;
  };
}

function record(metrics: Metrics, request: FastifyRequest, reply: FastifyReply) {
  // The pattern, never request.url: raw paths and query strings are unbounded and may carry keys.
  const route = request.routeOptions.url ?? 'unmatched';
  const labels = { route, method: request.method, status: String(reply.statusCode) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  if (route === TRIGGER_ROUTE && request.method === 'POST') {
    const outcome =
      reply.getHeader('idempotent-replayed') === 'true'
        ? 'replayed'
        : reply.statusCode === 200
          ? 'accepted'
          : (request.errorCode ?? `http_${reply.statusCode}`);
    metrics.triggerOutcomes.inc({ outcome });
  }
}

export default fp(
  async (fastify) => {
    const metrics = createMetrics(fastify);
    fastify.decorate('metrics', metrics);
    fastify.addHook('onResponse', async (request, reply) => record(metrics, request, reply));
    fastify.addHook('onClose', async () => metrics.register.clear());
  },
  { name: 'metrics', fastify: '5.x', dependencies: ['errors'] },
);
