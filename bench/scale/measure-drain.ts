// bench:scale (a): due calls committed at once into the running service's queue and drained by its dispatcher.
// Dialled per second from the calls' own started_at, the claim pass time from the service's
// oct_dispatch_pass_duration_seconds histogram, and a check from the rows: no account above its concurrency limit at
// any instant. Calls waiting for something else (the queue dimension's) stay waiting beside them.
import type pg from 'pg';

/** The drain's calls, remembered (runner's connection, temporary) to measure them after. */
export async function rememberDrain(db: pg.Client, ids: string[]): Promise<number> {
  await db.query('DROP TABLE IF EXISTS scale_waiting');
  const { rowCount } = await db.query(
    `CREATE TEMP TABLE scale_waiting AS SELECT id, account_id, agent_id FROM calls WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  await db.query('ALTER TABLE scale_waiting ADD PRIMARY KEY (id)');
  return rowCount ?? 0;
}

/** The sum of histograms of the same buckets (runs pooled). */
export function histogramSum(histograms: Histogram[]): Histogram {
  return {
    buckets: (histograms[0]?.buckets ?? []).map(([le], i) => [
      le,
      histograms.reduce((n, h) => n + (h.buckets[i]?.[1] ?? 0), 0),
    ]),
    sum: histograms.reduce((n, h) => n + h.sum, 0),
    count: histograms.reduce((n, h) => n + h.count, 0),
  };
}

/** A histogram's cumulative buckets (upper bound in seconds -> count), its sum and count, as /metrics exposes them. */
export interface Histogram {
  buckets: [number, number][];
  sum: number;
  count: number;
}

export async function scrapeHistogram(internalPort: number, name: string): Promise<Histogram> {
  const text = await fetch(`http://127.0.0.1:${internalPort}/metrics`).then((r) => r.text());
  const buckets: [number, number][] = [];
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    const bucket = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`).exec(line);
    if (bucket) buckets.push([bucket[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(bucket[1]), Number(bucket[2])]);
    else if (line.startsWith(`${name}_sum `)) sum = Number(line.split(' ')[1]);
    else if (line.startsWith(`${name}_count `)) count = Number(line.split(' ')[1]);
  }
  if (buckets.length === 0)
    throw new Error(`${name} is not on /metrics: is the service built from a checkout that has it?`);
  return { buckets, sum, count };
}

export function histogramSince(after: Histogram, before: Histogram): Histogram {
  return {
    buckets: after.buckets.map(([le, n], i) => [le, n - (before.buckets[i]?.[1] ?? 0)]),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/** Prometheus' histogram_quantile: linear within the bucket the rank falls in; milliseconds. */
export function quantileMs(h: Histogram, q: number): number {
  if (h.count === 0) return Number.NaN;
  const rank = q * h.count;
  let lower = 0;
  let below = 0;
  for (const [le, n] of h.buckets) {
    if (n >= rank) {
      if (!Number.isFinite(le)) return lower * 1000; // beyond the last finite bound: its bound, as Prometheus does
      return (lower + ((le - lower) * (rank - below)) / Math.max(1, n - below)) * 1000;
    }
    lower = le;
    below = n;
  }
  return lower * 1000;
}

export interface DrainFigures {
  calls: number;
  failed: number;
  /** Seconds from the commit to the last dial. */
  seconds: number;
  /** Calls dialled per second (calls / seconds). */
  perSecond: number;
  /**
   * The claim passes: how many, their mean and quantiles, and their time per call dialled (all passes' seconds over the
   * drain's calls). A pass's length follows how many calls it takes (at most 50 accounts x 10 slots), which depends on
   * how the previous passes' calls ended (bench/README.md, "How to read it"); the time per call does not.
   */
  claimPasses: { count: number; meanMs: number; p50Ms: number; p99Ms: number; msPerCall: number };
  /** The run's claim passes (to pool the runs). */
  passes: Histogram;
  /** The most calls of one account whose [started_at, ended_at) overlap (an end and a start at one instant: the end first). */
  maxActivePerAccount: number;
}

export interface DrainContext {
  db: pg.Client;
  internalPort: number;
  /** When the drain's calls were committed. */
  committedAt: Date;
  timeoutMs: number;
  log(line: string): void;
}

async function waitUntilDialled(ctx: DrainContext) {
  const deadline = Date.now() + ctx.timeoutMs;
  let lastLog = 0;
  for (;;) {
    const {
      rows: [row],
    } = await ctx.db.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM scale_waiting w JOIN calls c USING (id) WHERE c.status = 'initiated'`,
    );
    if (row!.waiting === 0) return;
    if (Date.now() > deadline)
      throw new Error(`drain: ${row!.waiting} calls still waiting after ${ctx.timeoutMs / 1000} s`);
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now();
      ctx.log(`drain: ${row!.waiting} calls waiting`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function claimPassFigures(passes: Histogram, calls: number): DrainFigures['claimPasses'] {
  return {
    count: passes.count,
    msPerCall: round(calls ? (passes.sum / calls) * 1000 : Number.NaN, 3),
    meanMs: round(passes.count ? (passes.sum / passes.count) * 1000 : Number.NaN, 2),
    p50Ms: round(quantileMs(passes, 0.5), 2),
    p99Ms: round(quantileMs(passes, 0.99), 2),
  };
}

/** Waits until none of the drain's calls waits, then reads the figures; `before` is scraped at the commit. */
export async function measureDrain(ctx: DrainContext, before: Histogram): Promise<DrainFigures> {
  await waitUntilDialled(ctx);
  const passes = histogramSince(await scrapeHistogram(ctx.internalPort, 'oct_dispatch_pass_duration_seconds'), before);
  const {
    rows: [timing],
  } = await ctx.db.query<{ calls: number; failed: number; last: Date }>(
    `SELECT count(c.started_at)::int AS calls, count(*) FILTER (WHERE c.status = 'failed')::int AS failed, max(c.started_at) AS last
       FROM scale_waiting w JOIN calls c USING (id)`,
  );
  const {
    rows: [overlap],
  } = await ctx.db.query<{ max: number }>(`
    WITH c AS (SELECT c.account_id, c.started_at, coalesce(c.ended_at, 'infinity') AS ended_at
                 FROM scale_waiting w JOIN calls c USING (id) WHERE c.started_at IS NOT NULL),
         ev AS (SELECT account_id, started_at AS at, 1 AS delta FROM c UNION ALL SELECT account_id, ended_at, -1 FROM c)
    SELECT coalesce(max(active), 0)::int AS max
      FROM (SELECT sum(delta) OVER (PARTITION BY account_id ORDER BY at, delta ROWS UNBOUNDED PRECEDING) AS active FROM ev) r`);
  const t = timing!;
  const seconds = (t.last.getTime() - ctx.committedAt.getTime()) / 1000;
  return {
    calls: t.calls,
    failed: t.failed,
    seconds: round(seconds, 2),
    perSecond: seconds > 0 ? Math.round(t.calls / seconds) : Number.NaN,
    claimPasses: claimPassFigures(passes, t.calls),
    passes,
    maxActivePerAccount: overlap!.max,
  };
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
