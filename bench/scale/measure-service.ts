// bench:scale (i), (b) and (c): the CPU a quiet service costs, triggers at a fixed rate across the keys, and the
// webhook worker's deliveries per second to the healthy endpoints while the timing-out ones hold their attempts; and
// the wait for a quiet service between them (the timing-out endpoints' deliveries never finish, so bench/setup.ts's
// waitIdle would wait for ever).
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { cpuSince, cpuSnapshot } from '../cpu.js';
import type { LoadResult } from '../load.js';
import { runLoadProcess } from '../processes.js';
import type { Receiver } from '../receiver.js';
import { TRIGGER_BODY, TRIGGER_PATH } from '../scenarios.js';
import { v7IdSql } from '../setup.js';
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

/** CPU milliseconds a second: the service's process, its database's sessions (client backends), both. */
export interface IdleFigures {
  seconds: number;
  serviceMsPerSecond: number;
  databaseMsPerSecond: number;
  msPerSecond: number;
}

/**
 * (i) What a quiet service (nothing sent, nothing due) and the sessions it holds on its database use of the CPU over
 * `seconds`: its polls, sweeps and leadership. Autovacuum is the database's own and is not counted.
 */
export async function measureIdle(pid: number, database: string, seconds: number): Promise<IdleFigures> {
  const before = cpuSnapshot(pid, database);
  const at = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const used = cpuSince(before, pid, database);
  const elapsed = (performance.now() - at) / 1000;
  const perSecond = (cpu: number) => round((cpu * 1000) / elapsed, 1);
  return {
    seconds: round(elapsed, 1),
    serviceMsPerSecond: perSecond(used.service),
    databaseMsPerSecond: perSecond(used.database),
    msPerSecond: perSecond(used.service + used.database),
  };
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

/**
 * `perHealthy` due call.completed deliveries to each endpoint but the stalled ones, and `perStalled` to each of those,
 * with their completed calls and events, in one transaction that wakes the workers (as bench/setup.ts's
 * createPendingDeliveries, with counts per endpoint); returns the ids of the healthy ones and the commit time. The
 * deliveries of the endpoints are interleaved, as events of many accounts arrive.
 */
async function createDueDeliveries(
  db: pg.Client,
  stalledEndpoints: string[],
  perHealthy: number,
  perStalled: number,
): Promise<{ healthy: Set<string>; inserted: number; committedAt: number }> {
  await db.query('BEGIN');
  try {
    const { rows } = await db.query<{ id: string; healthy: boolean }>(
      `
      WITH endpoints AS (
             SELECT e.id, e.account_id, a.default_agent_id AS agent_id,
                    CASE WHEN e.id = ANY($1::uuid[]) THEN $3::int ELSE $2::int END AS n
               FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id),
           wanted AS (
             SELECT e.*, ${v7IdSql('now()')} AS call_id, ${v7IdSql('now()')} AS event_id, ${v7IdSql('now()')} AS delivery_id, g
               FROM endpoints e CROSS JOIN LATERAL generate_series(1, e.n) AS g),
           made AS (
             INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at,
                                created_at, updated_at, started_at, answered_at, ended_at, duration_seconds)
             SELECT call_id, account_id, agent_id, '+14155552671', '+14155550100', '{"bench":"e"}', 'completed', now(), now(),
                    now(), now(), now(), now(), now(), 1
               FROM wanted
             RETURNING id, agent_id, phone_number, name, email, metadata, created_at, started_at, answered_at, ended_at,
                       duration_seconds),
           events AS (
             INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
             SELECT event_id, call_id, 'in_progress', 'completed', 'bench', now() FROM wanted)
      INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at)
      SELECT w.delivery_id, w.id, c.id, w.event_id, 'call.completed',
             json_build_object('type', 'call.completed', 'timestamp', now(), 'data', json_build_object(
               'call_id', c.id, 'status', 'completed', 'agent_id', c.agent_id, 'phone_number', c.phone_number, 'name', c.name,
               'email', c.email, 'metadata', c.metadata, 'created_at', c.created_at, 'started_at', c.started_at,
               'answered_at', c.answered_at, 'ended_at', c.ended_at, 'duration_seconds', c.duration_seconds,
               'failure_reason', NULL))::text,
             now()
        FROM wanted w JOIN made c ON c.id = w.call_id
       ORDER BY w.g, w.id
      RETURNING id, NOT (endpoint_id = ANY($1::uuid[])) AS healthy`,
      [stalledEndpoints, perHealthy, perStalled],
    );
    await db.query(`SELECT pg_notify('oct_webhooks', 'bench')`);
    await db.query('COMMIT');
    return {
      healthy: new Set(rows.filter((r) => r.healthy).map((r) => r.id)),
      inserted: rows.length,
      committedAt: performance.timeOrigin + performance.now(),
    };
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
}

/**
 * `perHealthy` due deliveries to each healthy endpoint and `perStalled` to each timing-out one, committed at once;
 * the healthy ones' arrivals at the receiver, from the commit to the last.
 */
export async function webhookDrain(
  db: pg.Client,
  receiver: Receiver,
  stalledEndpoints: string[],
  counts: { perHealthy: number; perStalled: number },
  held: () => number,
): Promise<WebhookFigures> {
  receiver.arrivals = [];
  const { healthy, inserted, committedAt } = await createDueDeliveries(
    db,
    stalledEndpoints,
    counts.perHealthy,
    counts.perStalled,
  );
  // Set in the same tick as the commit's answer: no arrival is missed. The stalled ones never arrive.
  receiver.awaited = new Set(healthy);
  try {
    const deadline = Date.now() + 120_000;
    while (receiver.arrivals.length < healthy.size && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    if (receiver.arrivals.length < healthy.size)
      throw new Error(`webhooks: ${receiver.arrivals.length} of ${healthy.size} healthy deliveries arrived`);
    const seconds = (Math.max(...receiver.arrivals) - committedAt) / 1000;
    return {
      inserted,
      healthy: healthy.size,
      perSecond: Math.round(healthy.size / seconds),
      seconds: round(seconds, 2),
      heldAtEnd: held(),
    };
  } finally {
    receiver.awaited = null;
  }
}
