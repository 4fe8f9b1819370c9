// bench:scale (b) and (c): triggers at a fixed rate across the keys, and the webhook worker's deliveries per second to
// the healthy endpoints while the timing-out ones hold their attempts; and the wait for a quiet service between them
// (the timing-out endpoints' deliveries never finish, so bench/setup.ts's waitIdle would wait for ever).
import type pg from 'pg';
import type { LoadResult } from '../load.js';
import { runLoadProcess } from '../processes.js';
import type { Receiver } from '../receiver.js';
import { TRIGGER_BODY, TRIGGER_PATH } from '../scenarios.js';
import { createPendingDeliveries } from '../setup.js';
import type { Percentiles } from '../stats.js';
import { round } from './measure-drain.js';

// TLS_MODE=proxy: the listener is plain HTTP and the service insists on being told the client spoke https.
const HEADERS = { 'content-type': 'application/json', 'x-forwarded-proto': 'https' };

/** The endpoints of the accounts whose webhooks time out. */
export async function endpointsOf(db: pg.Client, accountIds: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM webhook_endpoints WHERE account_id = ANY($1::uuid[])',
    [accountIds],
  );
  return rows.map((r) => r.id);
}

/**
 * No live call and no pending delivery except to `stalledEndpoints`. A waiting call that is not due (the queue
 * dimension's: scheduled later, or for a window that opens after the run) is not live.
 */
export async function waitQuiet(db: pg.Client, stalledEndpoints: string[], timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const {
      rows: [row],
    } = await db.query<{ live: number; pending: number }>(
      `
      SELECT (SELECT count(*)::int FROM calls
               WHERE status IN ('dialing', 'in_progress') OR (status = 'initiated' AND not_before <= now())) AS live,
             (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending' AND endpoint_id <> ALL($1::uuid[])) AS pending`,
      [stalledEndpoints],
    );
    if (row!.live === 0 && row!.pending === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `service not quiet after ${timeoutMs} ms: ${row!.live} live calls, ${row!.pending} pending deliveries`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface TriggerFigures extends Percentiles {
  rate: number;
  sentPerSecond: number;
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
}

export function triggerFigures(result: LoadResult, rate: number): TriggerFigures {
  return {
    ...result.latency,
    rate,
    sentPerSecond: round(result.sentPerSecond),
    statuses: result.statuses,
    errors: result.errors,
    seconds: round(result.durationSeconds, 2),
  };
}

/** A fixed rate, open loop (latency from each request's intended send time: bench/load.ts), rotating over every key. */
export async function fixedRateTriggers(
  port: number,
  keys: string[],
  rate: number,
  seconds: number,
  options: { recordCalls?: boolean } = {},
): Promise<LoadResult> {
  return runLoadProcess({
    url: `http://127.0.0.1:${port}`,
    path: TRIGGER_PATH,
    headers: HEADERS,
    body: TRIGGER_BODY,
    keys,
    // Up to one socket per request a second: the rate holds while answers take up to a second.
    connections: rate,
    durationSeconds: seconds,
    rate,
    expectStatus: 200,
    ...(options.recordCalls ? { recordCalls: true } : {}),
  });
}

/**
 * A recordCalls load's latencies split by intended send time: inside [from, to] (wall-clock ms, bench/load.ts wallNow)
 * and outside it. Both lists are kept in the same order (status 200 only), so sample i is call i.
 */
export function splitByTime(result: LoadResult, from: number, to: number): { inside: number[]; outside: number[] } {
  const inside: number[] = [];
  const outside: number[] = [];
  const calls = result.calls ?? [];
  (result.samples ?? []).forEach((ms, i) => {
    const due = calls[i]?.[1] ?? Number.NaN;
    (due >= from && due <= to ? inside : outside).push(ms);
  });
  return { inside, outside };
}

/** Triggers the service accepted since it started (its own counter on the internal /metrics). */
export async function acceptedSoFar(internalPort: number): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${internalPort}/metrics`).then((r) => r.text());
  return Number(/^oct_trigger_outcomes_total\{outcome="accepted"\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

export interface WebhookFigures {
  inserted: number;
  healthy: number;
  /** Healthy deliveries per second, from the commit to the last arrival at the receiver. */
  perSecond: number;
  seconds: number;
  /** Attempts the stall server held at the end (the timing-out endpoints' caps all taken). */
  heldAtEnd: number;
}

/** Due deliveries over every endpoint, committed at once; arrivals of the healthy ones at the receiver. */
export async function webhookDrain(
  db: pg.Client,
  receiver: Receiver,
  stalledEndpoints: string[],
  count: number,
  held: () => number,
): Promise<WebhookFigures> {
  receiver.arrivals = [];
  const { ids, committedAt } = await createPendingDeliveries(db, count);
  // Set in the same tick as the commit's answer: no arrival is missed. The stalled ones never arrive.
  receiver.awaited = new Set(ids);
  try {
    const {
      rows: [row],
    } = await db.query<{ stalled: number }>(
      'SELECT count(*)::int AS stalled FROM webhook_deliveries WHERE id = ANY($1::uuid[]) AND endpoint_id = ANY($2::uuid[])',
      [[...ids], stalledEndpoints],
    );
    const healthy = ids.size - row!.stalled;
    const deadline = Date.now() + 120_000;
    while (receiver.arrivals.length < healthy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (receiver.arrivals.length < healthy)
      throw new Error(`webhooks: ${receiver.arrivals.length} of ${healthy} healthy deliveries arrived`);
    const seconds = (Math.max(...receiver.arrivals) - committedAt) / 1000;
    return {
      inserted: ids.size,
      healthy,
      perSecond: Math.round(healthy / seconds),
      seconds: round(seconds, 2),
      heldAtEnd: held(),
    };
  } finally {
    receiver.awaited = null;
  }
}
