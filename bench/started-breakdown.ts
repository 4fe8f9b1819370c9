// Where the time from a trigger to its call.started webhook goes (issue 16.3), from timestamps the service already
// stores, so that the same breakdown works on any built checkout (before and after a change):
//   sent (load process)           -> calls.created_at        the request up to the handler's clock (HTTP, key, rate limit)
//   calls.created_at              -> calls.started_at        the dispatcher's wake: the pass under way, then what runs before a claim
//   calls.started_at              -> delivery.created_at     the claim's first statement (due accounts) up to its BEGIN
//   delivery.created_at           -> attempt.started_at      the claim transaction and commit, the worker's wake and its claim
//   attempt.started_at            -> arrival (receiver)      signing, the HTTP request, the receiver
// All clocks are this machine's wall clock: Node's Date (ms), PostgreSQL's now() (the claim transaction's start) and
// `performance.timeOrigin + performance.now()` in the load process and the receiver.
import type pg from 'pg';
import { percentiles, type Percentiles } from './stats.js';

export const SEGMENTS = [
  'request',
  'dispatcher wake',
  'due accounts',
  'claim tx + worker wake + claim',
  'send',
] as const;
export type Segment = (typeof SEGMENTS)[number];
export type Breakdown = Record<Segment, Percentiles>;

export async function startedBreakdown(
  db: pg.Client,
  calls: [callId: string, sentAtMs: number][],
  arrivals: Map<string, number>,
): Promise<Breakdown> {
  const ids = calls.map(([id]) => id).filter((id) => arrivals.has(id));
  const { rows } = await db.query<{ id: string; accepted: number; claimed: number; tx: number; attempt: number }>(
    `
    SELECT c.id, extract(epoch FROM c.created_at) * 1000 AS accepted, extract(epoch FROM c.started_at) * 1000 AS claimed,
           extract(epoch FROM d.created_at) * 1000 AS tx, extract(epoch FROM min(a.started_at)) * 1000 AS attempt
      FROM calls c
      JOIN webhook_deliveries d ON d.call_id = c.id AND d.event_type = 'call.started'
      JOIN webhook_attempts a ON a.delivery_id = d.id
     WHERE c.id = ANY($1::uuid[])
     GROUP BY c.id, d.created_at`,
    [ids],
  );
  const sent = new Map(calls);
  const samples: Record<Segment, number[]> = Object.fromEntries(SEGMENTS.map((s) => [s, []])) as unknown as Record<
    Segment,
    number[]
  >;
  for (const r of rows) {
    const times = [
      sent.get(r.id)!,
      Number(r.accepted),
      Number(r.claimed),
      Number(r.tx),
      Number(r.attempt),
      arrivals.get(r.id)!,
    ];
    SEGMENTS.forEach((segment, i) => samples[segment].push(times[i + 1]! - times[i]!));
  }
  return Object.fromEntries(SEGMENTS.map((s) => [s, percentiles(samples[s])])) as Breakdown;
}

/** One line per segment: p50 / p90 / p99 in ms. */
export function describeBreakdown(b: Breakdown): string {
  return SEGMENTS.map((s) => `${s} ${b[s].p50}/${b[s].p90}/${b[s].p99}`).join('; ');
}
