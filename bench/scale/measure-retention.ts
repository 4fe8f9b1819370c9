// bench:scale (e), issue 25 point 5: is the bounded retention pass felt by the triggers? On the history database and a
// warm service, rounds of one trigger load at a fixed rate each, with one bounded pass (the service's own code,
// runRetentionPass with the default RETENTION_PASS_MAX_ROWS and RETENTION_PASS_MAX_SECONDS, on its own pool as another
// process would run it) started part-way through: the triggers sent while the pass ran against those of the same
// load before and after it. Rounds alternate both, three times.
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src/config.js';
import { retentionPolicy, runRetentionPass } from '../../src/jobs/retention.js';
import { createRetentionPool, RetentionRepository, type DeletedRows } from '../../src/storage/retention.js';
import { wallNow } from '../load.js';
import { percentiles, type Percentiles } from '../stats.js';
import { round } from './measure-drain.js';
import { acceptedSoFar, fixedRateTriggers, splitByTime } from './measure-service.js';
import { WaitSampler, type WaitWindow } from './wait-sampler.js';

export interface RetentionRound {
  outcome: string;
  seconds: number;
  deleted: DeletedRows;
  total: number;
  /** Triggers sent while the pass ran, and the same load's triggers before and after it. */
  during: Percentiles;
  without: Percentiles;
  /** Seconds of the pass the load did not cover (0: the load outlasted the pass). */
  uncoveredSeconds: number;
  statuses: Record<string, number>;
  /** What the database's backends were doing before, during and after the pass (wait-sampler.ts). */
  waits: Record<string, WaitWindow>;
}

export interface RetentionFigures {
  budget: { rows: number; seconds: number };
  rate: number;
  rounds: RetentionRound[];
  /** Every round's samples pooled. */
  during: Percentiles;
  without: Percentiles;
  /** Pooled p99 during a pass / pooled p99 without (target: at most 2). */
  ratio: number;
  /** Samples kept per round, for the JSON (during, without). */
  samples?: { during: number[]; without: number[] }[];
}

export interface RetentionContext {
  databaseUrl: string;
  config: Config;
  port: number;
  internalPort: number;
  keys: string[];
  rate: number;
  rounds: number;
  /** Seconds of load before the pass starts; the load lasts this, the pass's time budget and this again. */
  withoutSeconds: number;
  log(line: string): void;
}

export async function measureRetention(ctx: RetentionContext): Promise<RetentionFigures> {
  const budget = { rows: ctx.config.RETENTION_PASS_MAX_ROWS, ms: ctx.config.RETENTION_PASS_MAX_SECONDS * 1000 };
  const rounds: RetentionRound[] = [];
  const pooled = { during: [] as number[], without: [] as number[] };
  let startAt = 0;
  for (let r = 1; r <= ctx.rounds; r++) {
    const before = await acceptedSoFar(ctx.internalPort);
    const loadSeconds = 2 * ctx.withoutSeconds + budget.ms / 1000;
    const load = fixedRateTriggers(ctx.port, ctx.keys, ctx.rate, loadSeconds, { recordCalls: true });
    // The load process takes a second or more to start (tsx); the pass starts withoutSeconds into the load.
    for (const deadline = performance.now() + 15_000; performance.now() < deadline;) {
      if ((await acceptedSoFar(ctx.internalPort)) - before >= 10) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const sampler = new WaitSampler(ctx.databaseUrl);
    await sampler.start('before');
    await new Promise((resolve) => setTimeout(resolve, ctx.withoutSeconds * 1000));
    const pool = createRetentionPool(ctx.databaseUrl);
    const from = wallNow();
    sampler.mark('pass');
    let pass;
    try {
      pass = await runRetentionPass({
        retention: new RetentionRepository(pool),
        now: new Date(),
        policy: retentionPolicy(ctx.config),
        batchSize: ctx.config.RETENTION_BATCH_SIZE,
        pauseMs: ctx.config.RETENTION_PAUSE_MS,
        budget,
        startAt,
      });
    } finally {
      sampler.mark('after');
      await pool.end();
    }
    const to = wallNow();
    startAt = pass.next;
    const result = await load.finally(() => sampler.stop());
    const waits = await sampler.stop();
    const split = splitByTime(result, from, to);
    const loadEnd = Math.max(...(result.calls ?? []).map(([, due]) => due), from);
    const total = Object.values(pass.deleted).reduce((a, b) => a + b, 0);
    rounds.push({
      outcome: pass.outcome,
      seconds: round((to - from) / 1000, 2),
      deleted: pass.deleted,
      total,
      during: percentiles(split.inside),
      without: percentiles(split.outside),
      uncoveredSeconds: round(Math.max(0, to - loadEnd) / 1000, 1),
      statuses: result.statuses,
      waits,
    });
    pooled.during.push(...split.inside);
    pooled.without.push(...split.outside);
    const last = rounds.at(-1)!;
    ctx.log(
      `retention round ${r}: ${last.outcome} in ${last.seconds} s, ${total} rows; triggers p99 ${last.during.p99} ms during (${last.during.count}), ${last.without.p99} ms without (${last.without.count})`,
    );
  }
  const during = percentiles(pooled.during);
  const without = percentiles(pooled.without);
  return {
    budget: { rows: budget.rows, seconds: budget.ms / 1000 },
    rate: ctx.rate,
    rounds,
    during,
    without,
    ratio: round(during.p99 / without.p99, 2),
  };
}
