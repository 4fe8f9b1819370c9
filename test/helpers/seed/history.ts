// A year of finished calls at scale, set-based: each with its events, and the deliveries (with attempts) of the last
// 32 days to its account's endpoint. The database big enough for the planner to care that the plan tests read.
import { bulk, type Db } from './bulk.js';

/** One account's share of the history. */
export interface HistoryAccount {
  accountId: string;
  /** Its calls alternate between these two agents (the same one twice for one agent). */
  agents: [string, string];
  /** The agent of one call in a thousand. */
  rare: string;
  /** How many calls. */
  n: number;
}

/**
 * The accounts' finished calls over the 367 days before `now` (sparser the further back; the oldest past a year's
 * retention; every 20th failed), three events each, and for the calls of the last 32 days two deliveries each to the
 * account's endpoint (if it has one), with one attempt (ten when failed, one in 25): many rows in one statement, in
 * the order of their ids where the service's are (random), for the planner's statistics and the indexes' shape.
 */
export async function insertFinishedHistory(db: Db, accounts: readonly HistoryAccount[], now: Date): Promise<void> {
  await bulk(db, HISTORY, [
    accounts.map((x) => x.accountId),
    accounts.map((x) => x.agents[0]),
    accounts.map((x) => x.agents[1]),
    accounts.map((x) => x.rare),
    accounts.map((x) => x.n),
    now,
  ]);
}

const HISTORY = `
    WITH spec AS (
      SELECT s.*, e.id AS endpoint_id
        FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::int[]) AS s(account_id, agent1, agent2, rare, n)
        LEFT JOIN webhook_endpoints e ON e.account_id = s.account_id
    ), made AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, metadata, status, failure_reason, not_before,
                         expires_at, created_at, updated_at, started_at, answered_at, ended_at, duration_seconds, provider_call_id, dial_attempts,
                         outcome)
      SELECT gen_random_uuid(), s.account_id,
             CASE WHEN g % 1000 = 7 THEN s.rare WHEN g % 2 = 0 THEN s.agent1 ELSE s.agent2 END,
             '+1415' || lpad((g % 20000)::text, 7, '0'), '+14155550100', 'Caller ' || g, ('{"order":"' || g || '"}')::json,
             CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'completed' END::call_status,
             CASE WHEN g % 40 = 0 THEN 'busy' WHEN g % 20 = 0 THEN 'no_answer' END::failure_reason,
             t, t + interval '1 day', t, t + interval '70 seconds', t + interval '1 second',
             CASE WHEN g % 20 <> 0 THEN t + interval '5 seconds' END, t + interval '70 seconds', CASE WHEN g % 20 <> 0 THEN 65 END,
             'seed_' || s.account_id || '_' || g, 1,
             -- The runtime's outcome label of one answered call in seven.
             CASE WHEN g % 20 <> 0 AND g % 7 = 0 THEN 'booked' END
        FROM spec s, generate_series(1, s.n) AS g,
             -- A growing business: the further back, the sparser (three in ten of the calls in the last 32 days).
             LATERAL (SELECT $6::timestamptz - interval '1 hour' - (g::float8 / s.n) ^ 2 * interval '367 days' AS t) AS at
      RETURNING id, account_id, status, failure_reason, created_at
    ), events AS (
      INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
      -- In the order of the ids (random, as the service's): the primary key is filled from left to right.
      SELECT * FROM (
        SELECT gen_random_uuid() AS id, m.id, e.from_status::call_status, e.to_status::call_status,
               CASE WHEN e.to_status = 'failed' THEN m.failure_reason END, e.source, m.created_at + e.after
          FROM made m CROSS JOIN LATERAL (VALUES
            (NULL, 'initiated', 'api', interval '0'),
            ('initiated', 'dialing', 'dispatcher', interval '1 second'),
            ('dialing', m.status::text, 'provider', interval '70 seconds')) AS e(from_status, to_status, source, after)) AS e
       ORDER BY 1
      RETURNING id, call_id, to_status, occurred_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, status, attempt_count,
                                      next_attempt_at, last_attempt_at, completed_at, created_at)
      SELECT gen_random_uuid(), s.endpoint_id, ev.call_id, ev.id, CASE ev.to_status WHEN 'dialing' THEN 'call.started' ELSE 'call.' || ev.to_status END,
             '{"type":"seed","padding":"' || repeat('x', 300) || '"}', f.status::delivery_status, f.attempts,
             ev.occurred_at, ev.occurred_at + (f.attempts - 1) * interval '1 minute', ev.occurred_at + (f.attempts - 1) * interval '1 minute', ev.occurred_at
        FROM events ev JOIN made m ON m.id = ev.call_id JOIN spec s ON s.account_id = m.account_id,
             LATERAL (SELECT CASE WHEN abs(hashtext(ev.id::text)) % 25 = 0 THEN 'failed' ELSE 'succeeded' END AS status) AS st,
             LATERAL (SELECT st.status, CASE st.status WHEN 'failed' THEN 10 ELSE 1 END AS attempts) AS f
       WHERE s.endpoint_id IS NOT NULL AND ev.to_status <> 'initiated' AND m.created_at >= $6::timestamptz - interval '32 days'
       ORDER BY ev.occurred_at
      RETURNING id, status, attempt_count, created_at
    )
    INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, response_status)
    SELECT gen_random_uuid(), d.id, n, d.created_at + (n - 1) * interval '1 minute', 40, CASE WHEN d.status = 'failed' THEN 500 ELSE 200 END
      FROM deliveries d, generate_series(1, d.attempt_count) AS n`;
