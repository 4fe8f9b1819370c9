// The scale bench's history (bench/scale/data.ts): finished calls with their events, and the webhook deliveries of
// the last 32 days with their attempts, written a time window at a time by one INSERT ... SELECT chain per window.
// Not uniform: the accounts' shares follow a Zipf-like law (the k-th busiest account has about 1/k of the first's
// calls) and the traffic grows over the year (the last month holds about a fifth of the calls).
import type pg from 'pg';
import { ROW_ID, TTL, type Layout } from './data-tenants.js';
import { personNameSql } from './names.js';
const DAY = 86_400;
/**
 * Calls end from 375 days ago until a minute ago; the build then deletes those older than 370 days as a retention
 * would have (data.ts), which leaves 5 days past CALL_RETENTION_DAYS = 365 for the measured passes.
 */
export const HISTORY_DAYS = 375;
/**
 * The growth of the traffic: the call at position p (0 oldest, 1 newest) of the base stream ended
 * HISTORY_DAYS * (1 - p)^GROWTH days ago, so calls per day grow as the age falls (age^(1/GROWTH - 1)).
 */
const GROWTH = 1.5;
/**
 * Zipf-like pick of one of `count` (1-based): floor(count^u) for u uniform in [0, 1) from a multiplicative hash of
 * `g`: the k-th is picked with a share of about 1/k.
 */
const zipfPick = (g: string, count: number) =>
  `least(${count}, greatest(1, floor(power(${count}::float8, ((${g}::bigint * 2654435761) % 4294967296) / 4294967296.0))::int))`;
/** Deliveries are kept for the calls of the last 32 days (2 past WEBHOOK_LOG_RETENTION_DAYS = 30). */
const DELIVERY_DAYS = 32;
const NEWEST_AGE = 60;

export interface HistoryShape {
  finishedCalls: number;
  bigAccountCalls: number;
  deliveries: number;
}

/**
 * Two streams of calls: the base stream over HISTORY_DAYS, growing (GROWTH), on all accounts (the big one holding
 * bigAccountCalls evenly, the others by Zipf share), and a recent stream evenly over the last 32 days on the endpoint
 * accounts other than the big one (Zipf shares too). Every call of an account with an endpoint that ended within 32
 * days has its deliveries (started, and completed or failed), so the recent stream is sized for the deliveries asked
 * for (the base stream alone leaves too few calls in 32 days on so few accounts).
 */
export interface HistoryPlan {
  base: number;
  big: number;
  recent: number;
  chunks: { g0: number; g1: number; h0: number; h1: number }[];
}

export function planHistory(
  shape: HistoryShape,
  accounts: number,
  endpointAccounts: number,
  chunkCalls: number,
): HistoryPlan {
  const total = shape.finishedCalls;
  const big = Math.min(shape.bigAccountCalls, total);
  // The share of the base stream that ended within DELIVERY_DAYS (GROWTH's curve).
  const f = (DELIVERY_DAYS / HISTORY_DAYS) ** (1 / GROWTH);
  const r = accounts > 1 ? Math.max(0, endpointAccounts - 1) / (accounts - 1) : 0;
  const bigShare = endpointAccounts > 0 ? big : 0;
  const recent =
    endpointAccounts > 1
      ? Math.max(
          0,
          Math.min(total - big, Math.round((shape.deliveries / 2 - f * (bigShare + (total - big) * r)) / (1 - f * r))),
        )
      : 0;
  const base = total - recent;
  // The first call of the base stream within DELIVERY_DAYS (a little before it: the windows after it carry deliveries).
  const firstRecent = Math.max(0, Math.min(base, Math.floor(base * (1 - f)) - 1));
  const chunks: HistoryPlan['chunks'] = [];
  const old = Math.ceil(firstRecent / chunkCalls);
  for (let j = 0; j < old; j++)
    chunks.push({
      g0: Math.floor((j * firstRecent) / old),
      g1: Math.floor(((j + 1) * firstRecent) / old),
      h0: 0,
      h1: 0,
    });
  const windows = Math.max(1, Math.ceil((base - firstRecent + recent) / chunkCalls));
  for (let j = 0; j < windows; j++) {
    const part = (from: number, count: number, k: number) => from + Math.floor((k * count) / windows);
    chunks.push({
      g0: part(firstRecent, base - firstRecent, j),
      g1: part(firstRecent, base - firstRecent, j + 1),
      h0: part(0, recent, j),
      h1: part(0, recent, j + 1),
    });
  }
  return { base, big, recent, chunks: chunks.filter((c) => c.g1 > c.g0 || c.h1 > c.h0) };
}

const iso = (x: string) => `to_char(${x} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const quoted = (x: string) => `coalesce('"' || ${iso(x)} || '"', 'null')`;

/**
 * One window: its calls (5% failed, busy or no answer), their events (initiated, dialing, then in_progress and
 * completed, or failed), the deliveries of those events the account's endpoint heard (call.started, call.completed,
 * call.failed; the body the service would have frozen), and their attempts: one 200, or for 2% a 500 and then a 200
 * about 5 s later (the 500's start kept as the delivery's last failure, as the worker keeps it). Numbers are inlined; the arrays and times are parameters.
 */
function chunkSql(
  plan: HistoryPlan,
  others: number,
  recentAccounts: number,
  chunk: HistoryPlan['chunks'][number],
): string {
  const stepE = (DELIVERY_DAYS * DAY - NEWEST_AGE) / Math.max(1, plan.recent);
  const ms = (x: string) => `date_trunc('milliseconds', ${x})`;
  // Every consumer reads \`calls_made\` (materialized once: it is referenced several times), so the ids and times of a
  // call, its events and its deliveries agree without joining the rows just written. Times are cut to the millisecond,
  // as the timestamptz(3) columns store them, so the bodies show what the rows hold.
  return `
WITH src AS (
  SELECT g::bigint AS k,
         CASE WHEN x.big THEN $8::uuid ELSE ($1::uuid[])[x.i] END AS account,
         CASE WHEN x.big THEN $9::uuid ELSE ($2::uuid[])[x.i] END AS agent,
         CASE WHEN x.big THEN $10::text ELSE ($3::text[])[x.i] END AS from_number,
         CASE WHEN x.big THEN $12::uuid ELSE ($11::uuid[])[x.i] END AS endpoint,
         ${ms(`$7::timestamptz - (${NEWEST_AGE} + power(1 - (g + 1)::float8 / ${Math.max(1, plan.base)}, ${GROWTH}) * ${HISTORY_DAYS * DAY - NEWEST_AGE}) * interval '1 second'`)} AS ended
    FROM generate_series(${chunk.g0}, ${chunk.g1 - 1}) AS g,
         LATERAL (SELECT ${zipfPick('g', others)} AS i,
                         (g::bigint + 1) * ${plan.big} / ${Math.max(1, plan.base)} > g::bigint * ${plan.big} / ${Math.max(1, plan.base)} AS big) AS x
  UNION ALL
  SELECT ${plan.base} + h, ($4::uuid[])[y.i], ($5::uuid[])[y.i], ($6::text[])[y.i], ($13::uuid[])[y.i],
         ${ms(`$7::timestamptz - (${NEWEST_AGE} + (${Math.max(0, plan.recent - 1)} - h) * ${stepE}) * interval '1 second'`)}
    FROM generate_series(${chunk.h0}, ${chunk.h1 - 1}) AS h, LATERAL (SELECT ${zipfPick('h + 7919', Math.max(1, recentAccounts))} AS i) AS y
), calls_made AS MATERIALIZED (
  SELECT s.*, ${ROW_ID}(t.started - (200 + (s.k % 7) * 300) * interval '1 millisecond') AS id, ${ROW_ID}(t.started) AS started_event,
         ${ROW_ID}(s.ended) AS end_event, t.*,
         CASE WHEN o.failure IS NULL THEN s.ended - o.talk * interval '1 second' END AS answered,
         ${ms(`t.started - (200 + (s.k % 7) * 300) * interval '1 millisecond'`)} AS created,
         CASE WHEN o.failure IS NULL THEN o.talk END AS duration, o.failure,
         CASE WHEN o.failure IS NULL THEN 'completed' ELSE 'failed' END AS status,
         '+1' || (201 + s.k % 700) || lpad(((s.k * 104729) % 10000000)::text, 7, '0') AS phone,
         ${personNameSql('s.k')} AS name, CASE WHEN s.k % 3 <> 0 THEN 'lead' || s.k || '@example.com' END AS email,
         '{"crm_id":"L-' || s.k || '","campaign":"' || (ARRAY['spring', 'summer', 'autumn', 'winter'])[1 + s.k % 4] || '-' || (s.k % 12)
           || '","attempt":' || (1 + s.k % 3) || ',"vip":' || (s.k % 10 = 0) || '}' AS metadata
    FROM src s,
         LATERAL (SELECT CASE WHEN s.k % 40 = 3 THEN 'busy' WHEN s.k % 40 = 23 THEN 'no_answer' END AS failure, 20 + (s.k * 37) % 281 AS talk) AS o,
         LATERAL (SELECT s.ended - (CASE WHEN o.failure IS NULL THEN o.talk + 3 + s.k % 9 WHEN o.failure = 'busy' THEN 4 ELSE 30 END)
                          * interval '1 second' AS started) AS t
), calls_written AS (
  INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, failure_reason, not_before,
                     expires_at, created_at, updated_at, started_at, answered_at, ended_at, duration_seconds, provider_call_id, dial_attempts)
  SELECT c.id, c.account, c.agent, c.phone, c.from_number, c.name, c.email, c.metadata::json, c.status::call_status, c.failure::failure_reason,
         c.created, c.created + ${TTL}, c.created, c.ended, c.started, c.answered, c.ended, c.duration, 'sim_' || c.id, 1
    FROM calls_made c
  RETURNING 1
), events_written AS (
  INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
  SELECT CASE e.to_status WHEN 'dialing' THEN c.started_event WHEN 'initiated' THEN ${ROW_ID}(c.created) WHEN 'in_progress' THEN ${ROW_ID}(c.answered)
              ELSE c.end_event END,
         c.id, e.from_status::call_status, e.to_status::call_status, CASE WHEN e.to_status = 'failed' THEN c.failure::failure_reason END, e.source,
         CASE e.to_status WHEN 'initiated' THEN c.created WHEN 'dialing' THEN c.started WHEN 'in_progress' THEN c.answered ELSE c.ended END
    FROM calls_made c CROSS JOIN LATERAL (VALUES
      (NULL, 'initiated', 'api'), ('initiated', 'dialing', 'dispatcher'), ('dialing', 'in_progress', 'provider'),
      ('in_progress', 'completed', 'provider'), ('dialing', 'failed', 'provider')) AS e(from_status, to_status, source)
   WHERE e.to_status IN ('initiated', 'dialing')
      OR (c.status = 'completed' AND e.to_status IN ('in_progress', 'completed'))
      OR (c.status = 'failed' AND e.to_status = 'failed')
  RETURNING 1
), deliveries_written AS (
  INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, status, attempt_count, next_attempt_at,
                                  last_attempt_at, completed_at, created_at, last_failure_at)
  SELECT ${ROW_ID}(d.at), c.endpoint, c.id, d.event, d.type,
         '{"type":"' || d.type || '","timestamp":"' || ${iso('d.at')} || '","data":{"call_id":"' || c.id || '","status":"'
           || d.status || '","agent_id":"' || c.agent || '","phone_number":"' || c.phone || '","name":'
           || coalesce(to_json(c.name)::text, 'null') || ',"email":' || coalesce(to_json(c.email)::text, 'null')
           || ',"metadata":' || c.metadata || ',"created_at":"' || ${iso('c.created')} || '","started_at":' || ${quoted('c.started')}
           || ',"answered_at":' || ${quoted('d.answered')} || ',"ended_at":' || ${quoted('d.ended')}
           || ',"duration_seconds":' || coalesce(d.duration::text, 'null') || ',"failure_reason":'
           || coalesce('"' || d.failure || '"', 'null') || '}}',
         'succeeded', a.attempts, a.last_at, a.last_at, a.last_at + a.took * interval '1 millisecond', d.at,
         CASE WHEN a.attempts > 1 THEN d.at + interval '15 milliseconds' END
    FROM calls_made c
   CROSS JOIN LATERAL (VALUES
      (c.started_event, 'call.started', 'dialing', c.started, NULL::timestamptz, NULL::timestamptz, NULL::int, NULL::text),
      (c.end_event, 'call.' || c.status, c.status, c.ended, c.answered, c.ended, c.duration, c.failure))
      AS d(event, type, status, at, answered, ended, duration, failure)
   CROSS JOIN LATERAL (SELECT abs(hashtext(d.event::text)) AS hash) AS h
   CROSS JOIN LATERAL (SELECT CASE WHEN h.hash % 50 = 0 THEN 2 ELSE 1 END AS attempts,
                              d.at + (CASE WHEN h.hash % 50 = 0 THEN 5000 + h.hash % 1000 ELSE 15 END) * interval '1 millisecond' AS last_at,
                              20 + h.hash % 180 AS took) AS a
   WHERE c.endpoint IS NOT NULL AND c.ended >= $7::timestamptz - interval '${DELIVERY_DAYS} days'
  RETURNING id, attempt_count, created_at, last_attempt_at, completed_at
), attempts_written AS (
  INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, response_status)
  SELECT ${ROW_ID}(d.created_at), d.id, n,
         CASE WHEN n < d.attempt_count THEN d.created_at + interval '15 milliseconds' ELSE d.last_attempt_at END,
         CASE WHEN n < d.attempt_count THEN 30 ELSE round(extract(epoch FROM d.completed_at - d.last_attempt_at) * 1000)::int END,
         CASE WHEN n < d.attempt_count THEN 500 ELSE 200 END
    FROM deliveries_written d CROSS JOIN generate_series(1, d.attempt_count) AS n
  RETURNING 1
)
SELECT (SELECT count(*) FROM calls_written)::int AS calls, (SELECT count(*) FROM events_written)::int AS events,
       (SELECT count(*) FROM deliveries_written)::int AS deliveries, (SELECT count(*) FROM attempts_written)::int AS attempts`;
}

export interface HistoryInput {
  layout: Layout;
  endpoints: { accountId: string; endpointId: string }[];
  now: Date;
}

export type ChunkCounts = { calls: number; events: number; deliveries: number; attempts: number };

/** The statement and values of each window, in time order (oldest first). */
export function historyStatements(plan: HistoryPlan, input: HistoryInput): { text: string; values: unknown[] }[] {
  const { layout } = input;
  const others = layout.accountIds.map((_, n) => n).filter((n) => n !== layout.big);
  const recent = [...layout.healthy, ...layout.timingOut].filter((n) => n !== layout.big).sort((a, b) => a - b);
  const pick = (ns: number[], of: string[]) => ns.map((n) => of[n]!);
  const endpointOf = new Map(input.endpoints.map((e) => [e.accountId, e.endpointId]));
  const values = [
    pick(others, layout.accountIds),
    pick(others, layout.agentIds),
    pick(others, layout.agentPhones),
    pick(recent, layout.accountIds),
    pick(recent, layout.agentIds),
    pick(recent, layout.agentPhones),
    input.now,
    layout.accountIds[layout.big],
    layout.agentIds[layout.big],
    layout.agentPhones[layout.big],
    others.map((n) => endpointOf.get(layout.accountIds[n]!) ?? null),
    endpointOf.get(layout.accountIds[layout.big]!) ?? null,
    recent.map((n) => endpointOf.get(layout.accountIds[n]!) ?? null),
  ];
  return plan.chunks.map((chunk) => ({
    text: chunkSql(plan, Math.max(1, others.length), recent.length, chunk),
    values,
  }));
}

export async function runChunk(
  db: pg.ClientBase,
  statement: { text: string; values: unknown[] },
): Promise<ChunkCounts> {
  const { rows } = await db.query<ChunkCounts>(statement);
  return rows[0]!;
}
