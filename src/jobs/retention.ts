// The data lifecycle in the background of every process: every few minutes one pass deletes, in small batches with a
// pause between them (at least as long as the batch took), each kind of row past its retention; one process at a time
// across replicas (the others skip). A pass is bounded (rows and time): a backlog is worked off over several
// intervals, the next pass resuming at the kind of row the last one stopped at. `callctl retention run` runs the same
// pass once, unbounded.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import {
  noRowsDeleted,
  RETENTION_STEPS,
  type DeletedRows,
  type RetentionCutoffs,
  type RetentionRepository,
} from '../storage/index.js';
import { SingleFlight } from './single-flight.js';
import { withTimeout } from './with-timeout.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long each kind of row is kept once it is over (expiries are the rows' own: sessions, links, idempotency). */
export interface RetentionPolicy {
  webhookLogDays: number;
  callDays: number;
  auditDays: number;
  sessionIdleMinutes: number;
}

export function retentionPolicy(config: Config): RetentionPolicy {
  return {
    webhookLogDays: config.WEBHOOK_LOG_RETENTION_DAYS,
    callDays: config.CALL_RETENTION_DAYS,
    auditDays: config.AUDIT_RETENTION_DAYS,
    sessionIdleMinutes: config.DASHBOARD_SESSION_IDLE_MINUTES,
  };
}

export function retentionCutoffs(now: Date, policy: RetentionPolicy): RetentionCutoffs {
  const ago = (ms: number) => new Date(now.getTime() - ms);
  return {
    now,
    sessionsIdleSince: ago(policy.sessionIdleMinutes * 60_000),
    deliveriesBefore: ago(policy.webhookLogDays * DAY_MS),
    callsBefore: ago(policy.callDays * DAY_MS),
    auditBefore: ago(policy.auditDays * DAY_MS),
  };
}

/**
 * completed: nothing past its retention is left; limited: the pass used its budget and yields to the next interval;
 * skipped: another process holds the lock; stopped: the process is closing.
 */
export type PassOutcome = 'completed' | 'limited' | 'skipped' | 'stopped';

export interface RetentionPassResult {
  outcome: PassOutcome;
  deleted: DeletedRows;
  /** The step (index into RETENTION_STEPS) the next pass starts at: where a limited pass stopped, else 0. */
  next: number;
}

/** How much one pass may do before it yields to the next interval. */
export interface PassBudget {
  /** Rows deleted, cascaded rows included (the last batch may pass it by its cascades: a batch is never split). */
  rows: number;
  /** Time since the pass took the lock, checked before each batch (the batch under way finishes). */
  ms: number;
}

export interface RetentionPassOptions {
  /** The retention's repository on its own pool (createRetention): one connection holds the lock, one runs the batches. */
  retention: RetentionRepository;
  /** The moment the retentions are measured from (the service's clock). */
  now: Date;
  policy: RetentionPolicy;
  /** Rows per statement. */
  batchSize: number;
  /**
   * The least pause after a full batch, so that the dispatcher and the webhook worker get the database between
   * batches. The pause is at least as long as the batch took, too (see runRetentionPass).
   */
  pauseMs: number;
  /** Checked before each batch: the pass ends early when it returns true. */
  stopping?: () => boolean;
  /** After each batch commits, with the rows it deleted (metrics count them then, so a failed pass still counts). */
  onBatch?: (deleted: Partial<DeletedRows>) => void | Promise<void>;
  /** Without it the pass goes on until every range is empty (callctl). */
  budget?: PassBudget;
  /** The step to begin with (the last limited pass's `next`); the steps before it come after the last one. */
  startAt?: number;
  /** The clock the budget's time is measured with (tests give their own). */
  elapsed?: () => number;
}

/**
 * One pass: for each kind of row, batches until its range is empty, or until the budget is used ('limited': the next
 * pass resumes at that kind of row, so one large backlog cannot starve the others). Returns at once ('skipped') when
 * another process holds the lock.
 *
 * After each full batch it pauses at least as long as that batch took (and at least pauseMs): the pass has the
 * database at most half the time, and when the database is slow (a checkpoint, whose first change to each page writes
 * the whole page to the WAL; other load) its batches take longer and the pass slows down with them, rather than
 * keep the WAL as busy while the requests' commits wait on it.
 */
export async function runRetentionPass(options: RetentionPassOptions): Promise<RetentionPassResult> {
  const { retention, batchSize, pauseMs, stopping = () => false, onBatch, budget } = options;
  const startAt = (options.startAt ?? 0) % RETENTION_STEPS.length;
  const deleted = noRowsDeleted();
  const lock = await retention.tryLock();
  if (!lock) return { outcome: 'skipped', deleted, next: startAt };
  const elapsed = options.elapsed ?? stopwatch();
  let total = 0;
  try {
    const cutoffs = retentionCutoffs(options.now, options.policy);
    for (let i = 0; i < RETENTION_STEPS.length; i++) {
      const at = (startAt + i) % RETENTION_STEPS.length;
      const step = RETENTION_STEPS[at]!;
      for (;;) {
        if (stopping()) return { outcome: 'stopped', deleted, next: at };
        if (budget && (total >= budget.rows || elapsed() >= budget.ms))
          return { outcome: 'limited', deleted, next: at };
        await lock.confirm();
        const limit = budget ? Math.min(batchSize, budget.rows - total) : batchSize;
        const began = performance.now();
        const batch = await retention.deleteBatch(step, cutoffs, limit);
        const took = performance.now() - began;
        for (const [table, rows] of Object.entries(batch.deleted) as [keyof DeletedRows, number][]) {
          deleted[table] += rows;
          total += rows;
        }
        await onBatch?.(batch.deleted);
        if (batch.taken < limit) break;
        const pause = Math.max(pauseMs, took);
        if (pause > 0) await sleep(pause);
      }
    }
    return { outcome: 'completed', deleted, next: 0 };
  } finally {
    await lock.release();
  }
}

function stopwatch(): () => number {
  const started = performance.now();
  return () => performance.now() - started;
}

export interface RetentionJobOptions {
  retention: RetentionRepository;
  now: () => Date;
  policy: RetentionPolicy;
  intervalMs: number;
  batchSize: number;
  pauseMs: number;
  budget: PassBudget;
  log: FastifyBaseLogger;
  onBatch?: (deleted: Partial<DeletedRows>) => void;
  onPass?: (outcome: PassOutcome | 'failed') => void;
}

/** How long closing waits for a pass under way (it stops before its next batch; one batch may still be running). */
const STOP_WAIT_MS = 10_000;

export class RetentionJob {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly passes: SingleFlight;
  /** While the database is down every pass fails: a line per 10 s, not one per pass. */
  private readonly logs: ThrottledLog;
  /** Where the next pass starts: the kind of row the last limited pass stopped at. */
  private next = 0;

  constructor(private readonly options: RetentionJobOptions) {
    this.logs = new ThrottledLog(options.log);
    // Failures are logged and counted by runNow.
    this.passes = new SingleFlight(
      async () => {
        await this.runNow();
      },
      () => undefined,
    );
  }

  /** The first pass one interval after start: a restart does not add work to the start. */
  start() {
    this.timer = setInterval(() => this.wake(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await withTimeout(this.passes.settle(), STOP_WAIT_MS).catch((error: Error) =>
      this.options.log.warn({ err: error }, 'retention: closing without waiting for the pass under way'),
    );
  }

  /** A pass now, or right after the one under way (never two at once in this process). */
  wake() {
    if (!this.stopped) this.passes.request();
  }

  /** Waits for the pass under way and the one asked for meanwhile, if any. */
  async settle() {
    await this.passes.settle();
  }

  /** One pass now, measured from the service's clock (tests, and the timer through wake). */
  async runNow(): Promise<RetentionPassResult> {
    const { options } = this;
    try {
      const result = await runRetentionPass({
        retention: options.retention,
        now: options.now(),
        policy: options.policy,
        batchSize: options.batchSize,
        pauseMs: options.pauseMs,
        budget: options.budget,
        startAt: this.next,
        stopping: () => this.stopped,
        onBatch: options.onBatch,
      });
      this.next = result.next;
      options.onPass?.(result.outcome);
      this.logs.recovered('pass', 'retention passes succeed again');
      const total = Object.values(result.deleted).reduce((a, b) => a + b, 0);
      if (total > 0)
        options.log.info(
          { deleted: result.deleted, outcome: result.outcome },
          `retention: deleted ${total} rows past their retention`,
        );
      return result;
    } catch (error) {
      options.onPass?.('failed');
      this.logs.warn('pass', { err: error }, 'retention pass failed; the next one continues where it stopped');
      throw error;
    }
  }
}
