// Where the time from a trigger to its call.started webhook goes (issue 16.3), from timestamps the service already
// stores, so that the same breakdown works on any built checkout (before and after a change):
//   intended send (load process)  -> calls.created_at        the request up to the handler's clock (HTTP, key, rate limit)
//   calls.created_at              -> delivery.created_at     the dispatcher's wake (the pass under way, the due accounts) up to
//                                                            the claim transaction's start (the delivery's created_at is its now())
//   delivery.created_at           -> calls.started_at        the claim reading its candidates (started_at is dated once they are read)
//   calls.started_at              -> attempt.started_at      the rest of the claim transaction and its commit, the worker's wake and claim
//   attempt.started_at            -> arrival (receiver)      signing, the HTTP request, the receiver
// All clocks are this machine's wall clock: Node's Date (ms), PostgreSQL's now() (the claim transaction's start) and
// `performance.timeOrigin + performance.now()` in the load process and the receiver.
//
// It also tells the calls that found a free slot from those that had to wait for one: a call accepted while its
// account already had MAX_CONCURRENT_CALLS calls ahead of it not yet ended (dialling, talking or waiting) could not
// start before one of them ended. Such a call is measured from the end of the call whose slot it took.
import type pg from 'pg';
import { percentiles, type Percentiles } from './stats.js';

export const SEGMENTS = [
  'request',
  'dispatcher wake to claim tx',
  'claim reads candidates',
  'claim commit + worker wake + claim',
  'send',
] as const;
export type Segment = (typeof SEGMENTS)[number];
export type Breakdown = Record<Segment, Percentiles>;
export type SegmentSamples = Record<Segment, number[]>;

export const emptySegments = (): SegmentSamples =>
  Object.fromEntries(SEGMENTS.map((s) => [s, []])) as unknown as SegmentSamples;

export interface StartedCalls {
  /** Calls that found a free slot: [intended send, latency to call.started] (ms). */
  immediate: [sentAt: number, latency: number][];
  /** Their segments (above). */
  segments: SegmentSamples;
  /** Calls that waited for a slot: from the intended send, and from the end of the call whose slot they took. */
  queued: { total: number[]; afterSlot: number[] };
}

/**
 * The round's calls that arrived, split and broken down. Reads every call of the round (after the service went
 * idle, so that each has ended) and the first attempt of each call.started delivery.
 */
export async function startedCalls(
  db: pg.Client,
  calls: [callId: string, sentAtMs: number][],
  arrivals: Map<string, number>,
  maxConcurrent: number,
): Promise<StartedCalls> {
  const { rows } = await db.query<{
    id: string;
    account: string;
    accepted: number;
    claimed: number | null;
    ended: number | null;
    tx: number | null;
    attempt: number | null;
  }>(
    `
    SELECT c.id, c.account_id AS account, extract(epoch FROM c.created_at) * 1000 AS accepted,
           extract(epoch FROM c.started_at) * 1000 AS claimed, extract(epoch FROM c.ended_at) * 1000 AS ended,
           extract(epoch FROM d.created_at) * 1000 AS tx, extract(epoch FROM min(a.started_at)) * 1000 AS attempt
      FROM calls c
      LEFT JOIN webhook_deliveries d ON d.call_id = c.id AND d.event_type = 'call.started'
      LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
     WHERE c.id = ANY($1::uuid[])
     GROUP BY c.id, d.created_at`,
    [calls.map(([id]) => id)],
  );
  const sent = new Map(calls);
  const byAccount = new Map<string, typeof rows>();
  for (const r of rows) {
    const list = byAccount.get(r.account) ?? [];
    list.push(r);
    byAccount.set(r.account, list);
  }
  const out: StartedCalls = { immediate: [], segments: emptySegments(), queued: { total: [], afterSlot: [] } };
  for (const list of byAccount.values()) {
    list.sort((a, b) => Number(a.accepted) - Number(b.accepted) || (a.id < b.id ? -1 : 1));
    list.forEach((r, i) => {
      const arrived = arrivals.get(r.id);
      if (arrived === undefined) return;
      const accepted = Number(r.accepted);
      const latency = arrived - sent.get(r.id)!;
      // Calls of the account accepted before this one and not yet ended when it was accepted.
      let ahead = 0;
      for (let j = 0; j < i; j++) if (list[j]!.ended === null || Number(list[j]!.ended) > accepted) ahead++;
      if (ahead >= maxConcurrent) {
        const claimed = Number(r.claimed);
        let freed = Number.NEGATIVE_INFINITY;
        for (const o of list)
          if (o.ended !== null && Number(o.ended) <= claimed) freed = Math.max(freed, Number(o.ended));
        out.queued.total.push(latency);
        if (Number.isFinite(freed)) out.queued.afterSlot.push(arrived - freed);
        return;
      }
      out.immediate.push([sent.get(r.id)!, latency]);
      if (r.claimed === null || r.tx === null || r.attempt === null) return;
      const times = [sent.get(r.id)!, accepted, Number(r.tx), Number(r.claimed), Number(r.attempt), arrived];
      SEGMENTS.forEach((segment, k) => out.segments[segment].push(times[k + 1]! - times[k]!));
    });
  }
  return out;
}

export function breakdownOf(samples: SegmentSamples): Breakdown {
  return Object.fromEntries(SEGMENTS.map((s) => [s, percentiles(samples[s])])) as Breakdown;
}

/** One line per segment: p50 / p90 / p99 / max in ms. */
export function describeBreakdown(b: Breakdown): string {
  return SEGMENTS.map((s) => `${s} ${b[s].p50}/${b[s].p90}/${b[s].p99}/${b[s].max}`).join('; ');
}
