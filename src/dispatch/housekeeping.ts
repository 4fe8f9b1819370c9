// The dispatcher's housekeeping: expiry and recovery sweeps, the dial ledger's pruning and the simulated calls' next
// steps, one pass at a time.
import { transitionCalls, type CallChange } from '../calls/transition.js';
import { SingleFlight } from '../jobs/single-flight.js';
import type { ThrottledLog } from '../logging/throttled-log.js';
import type { Storage } from '../storage/index.js';
import type { DialWork } from './dials.js';
import type { DispatcherOptions } from './dispatcher-options.js';
import { advanceSimulatedCalls } from './simulated-dialer.js';

/** The dial ledger (callee_dials) keeps 8 days: the longest cap window (7 days) and a day's margin. */
export const CALLEE_DIALS_KEPT_MS = 8 * 24 * 3600_000;
/** How often the ledger is pruned (by the dispatcher's clock): its old rows are a day's dials, not urgent. */
const PRUNE_EVERY_MS = 60_000;

/** Runs beside the claims, never before them, so that a new call never waits for it (issue 16.3). */
export class Housekeeping {
  /** The sweeps (when due: on the poll) and the simulated calls' next steps. */
  private readonly pass: SingleFlight;
  private sweepDue = true;
  private readonly storage: Storage;
  /** When the ledger was last pruned (the dispatcher's clock); null: not yet. */
  private prunedAt: number | null = null;

  constructor(
    private readonly options: DispatcherOptions,
    private readonly dials: DialWork,
    /** The dispatcher's loop: once it stops, no pass starts. */
    private readonly loop: { readonly stopped: boolean },
    logs: ThrottledLog,
  ) {
    this.storage = options.storage;
    this.pass = new SingleFlight(
      async () => {
        if (this.loop.stopped) return;
        await this.housekeep();
        logs.recovered('housekeeping', 'dispatcher housekeeping succeeds again');
      },
      (error) => logs.error('housekeeping', { err: error }, 'dispatcher housekeeping failed'),
    );
  }

  /** Asks for the expiry and recovery sweeps in the next housekeeping pass. */
  sweep() {
    this.sweepDue = true;
    if (!this.loop.stopped) this.pass.request();
  }

  /** Asks for the simulated calls' next steps. */
  advanceSoon() {
    if (!this.loop.stopped) this.pass.request();
  }

  /** Resolves once no pass is under way or asked for. */
  settle() {
    return this.pass.settle();
  }

  private async housekeep() {
    if (this.sweepDue) {
      this.sweepDue = false;
      await this.giveWay();
      await this.expire();
      await this.dials.recover();
      await this.prune();
    }
    await this.advance();
  }

  /** Deletes the dial ledger's rows older than CALLEE_DIALS_KEPT_MS, a batch per sweep, at most once a minute. */
  async prune() {
    const now = this.options.now().getTime();
    if (this.prunedAt !== null && Math.abs(now - this.prunedAt) < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    await this.storage.claims.pruneCalleeDials(new Date(now - CALLEE_DIALS_KEPT_MS));
  }

  private giveWay() {
    return this.options.requestsFirst?.() ?? Promise.resolve();
  }

  /**
   * The simulated calls' next steps: only where the environment's dialer is the simulated one (no account carrier is),
   * and only of the calls it dialled (calls.carrier): an agency's own carrier's calls follow their callbacks.
   */
  async advance() {
    if (!this.options.simulated || this.options.dialer.kind !== 'simulated') return;
    await this.giveWay();
    await advanceSimulatedCalls(this.storage, this.options.now(), this.options.simulated, this.options.queuedCallTtlMs);
  }

  /** Waiting calls past their time to live fail with reason expired. */
  async expire() {
    const now = this.options.now();
    const ids = await this.storage.claims.expiredCallIds(now);
    if (ids.length === 0) return;
    const expired: CallChange = { update: { kind: 'failed', reason: 'expired' } };
    await transitionCalls(this.storage, { kind: 'expired', ids, now }, () => expired, {
      now,
      source: 'expiry',
      queuedCallTtlMs: this.options.queuedCallTtlMs,
    });
  }
}
