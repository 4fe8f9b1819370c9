// bench:scale (e): one retention pass over the whole history, run with the service's own code (runRetentionPass and
// its pool, as `callctl retention run` runs it), while the service takes triggers at a fixed rate: the pass's time,
// rows deleted per table, and the triggers' latency during it.
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src/config.js';
import { retentionPolicy, runRetentionPass } from '../../src/jobs/retention.js';
import { createRetentionPool, RetentionRepository, type DeletedRows } from '../../src/storage/retention.js';
import { round } from './measure-drain.js';
import { fixedRateTriggers, triggerFigures, type TriggerFigures } from './measure-service.js';

/** The pass starts once the service has answered this many triggers of the run: it runs under load from its start. */
const UNDER_LOAD_AFTER = 50;

/** Triggers the service accepted since it started (its own counter on the internal /metrics). */
async function accepted(internalPort: number): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${internalPort}/metrics`).then((r) => r.text());
  return Number(/^oct_trigger_outcomes_total\{outcome="accepted"\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

export interface RetentionFigures {
  outcome: string;
  seconds: number;
  deleted: DeletedRows;
  total: number;
  rowsPerSecond: number;
  batches: number;
  triggers: TriggerFigures;
  /** Seconds of the trigger run during which the pass ran, of the run's whole length. */
  overlapSeconds: number;
}

export interface RetentionContext {
  databaseUrl: string;
  config: Config;
  port: number;
  internalPort: number;
  keys: string[];
  rate: number;
  loadSeconds: number;
  /** The pass stops before its next batch after this long (the run's time budget); its figures say so. */
  maxSeconds: number;
  log(line: string): void;
}

export async function measureRetention(ctx: RetentionContext): Promise<RetentionFigures> {
  const before = await accepted(ctx.internalPort);
  const load = fixedRateTriggers(ctx.port, ctx.keys, ctx.rate, ctx.loadSeconds).then((result) => ({
    result,
    endedAt: performance.now(),
  }));
  // The load process takes a second or more to start (tsx, autocannon).
  for (const deadline = performance.now() + 15_000; performance.now() < deadline;) {
    if ((await accepted(ctx.internalPort)) - before >= UNDER_LOAD_AFTER) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const pool = createRetentionPool(ctx.databaseUrl);
  let batches = 0;
  let lastLog = performance.now();
  const started = performance.now();
  let pass;
  try {
    pass = await runRetentionPass({
      retention: new RetentionRepository(pool),
      now: new Date(),
      policy: retentionPolicy(ctx.config),
      batchSize: ctx.config.RETENTION_BATCH_SIZE,
      pauseMs: ctx.config.RETENTION_PAUSE_MS,
      stopping: () => performance.now() - started > ctx.maxSeconds * 1000,
      onBatch: () => {
        batches++;
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          ctx.log(`retention: ${batches} batches in ${Math.round((lastLog - started) / 1000)} s`);
        }
      },
    });
  } finally {
    await pool.end();
  }
  const ended = performance.now();
  const { result, endedAt } = await load;
  const loadStarted = endedAt - result.durationSeconds * 1000;
  const overlap = Math.max(0, Math.min(ended, endedAt) - Math.max(started, loadStarted)) / 1000;
  const seconds = (ended - started) / 1000;
  const total = Object.values(pass.deleted).reduce((a, b) => a + b, 0);
  return {
    outcome: pass.outcome,
    seconds: round(seconds, 2),
    deleted: pass.deleted,
    total,
    rowsPerSecond: Math.round(total / seconds),
    batches,
    triggers: triggerFigures(result, ctx.rate),
    overlapSeconds: round(overlap, 1),
  };
}
