// The webhook delivery worker, one per process: claims due deliveries (a lease, so two processes never send the same
// attempt), sends each independently with a per-endpoint cap so one slow endpoint delays nobody else, and records
// every attempt with its outcome and the next try. An endpoint that answers 410 Gone is switched off, and audited as
// the service's doing, in the statement that records the attempt; that delivery and the endpoint's other pending ones
// are held (sent when it is enabled again), as is one claimed for an endpoint that was off.
// With several replicas one worker leads (src/jobs/wakeable-loop.ts): only it polls and answers the NOTIFYs of new
// deliveries, as a lone replica does; the others send what their own dispatcher hands them (call.started) and what
// they claim when their own attempts leave a backlog (issue 25.4).
import { ThrottledLog } from '../logging/throttled-log.js';
import { WEBHOOKS_CHANNEL, type ClaimedDelivery } from '../storage/index.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';
import { withTimeout } from '../jobs/with-timeout.js';
import { DeliveryAttempts } from './delivery-attempts.js';
import type { DeliveryWorkerOptions } from './delivery-worker-options.js';

export type { DeliveryWorkerOptions } from './delivery-worker-options.js';

/** The claim ranks at most this many due deliveries (CLAIM_DELIVERIES in src/storage/delivery-work.ts). */
const CLAIM_WINDOW = 1000;
/**
 * A claim reads every due delivery at least this often; in between (woken for new deliveries) it reads those due
 * since the last full claim, less RECENT_MARGIN_MS (a delivery is due from its writer's clock, taken before its
 * commit, on whichever replica wrote it).
 */
const FULL_CLAIM_EVERY_MS = 1_000;
/**
 * An attempt unanswered after this long is stalled (an endpoint timing out): it no longer takes one of the worker's
 * maxInFlight places, so that endpoints that time out (each up to its per-endpoint cap, for WEBHOOK_TIMEOUT_MS) do
 * not hold back everyone else's webhooks (issue 16.5). Waiting on a socket costs little; maxStalled bounds them.
 */
const STALLED_AFTER_MS = 1_000;
const RECENT_MARGIN_MS = 5_000;
/**
 * How long a stopping worker waits for its attempts' answers: an endpoint that times out holds its attempt for
 * WEBHOOK_TIMEOUT_MS (15 s by default), the whole of the process's shutdown grace (src/server.ts), after which the
 * process was killed (exit 1) with the attempt's lease still held.
 */
const STOP_WAIT_MS = 5_000;
/** How often a worker releases held deliveries whose endpoint is enabled (a race's leftovers; see releaseStrandedDeliveries). */
const STRANDED_EVERY_MS = 60_000;

export class DeliveryWorker {
  private readonly loop: WakeableLoop;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpointCount = new Map<string, number>();
  /** With the database down, every attempt in flight fails to be recorded at once. */
  private readonly logs: ThrottledLog;
  /** Sends each attempt, records it, and logs its failure. */
  private readonly attempts: DeliveryAttempts;
  /**
   * The last claim may have left due deliveries behind (it took all it was allowed to, or an endpoint reached its
   * cap): a finished attempt then asks for another pass. Otherwise everything due was claimed, and what becomes due
   * later wakes the worker itself (NOTIFY, poll): a pass per finished attempt only kept the worker busy with empty
   * claims.
   */
  private backlog = false;
  /** When the last claim that read every due delivery began: the service's clock (null: the next one must) and performance.now(). */
  private lastFullClaim: number | null = null;
  private lastFullClaimAt = 0;
  /** Attempts in flight for longer than STALLED_AFTER_MS, and those to an endpoint known to stall. */
  private readonly stalled = new Set<string>();
  /** Endpoints whose last attempt stalled: their next ones count as stalled from the start (until one is answered in time). */
  private readonly stalling = new Set<string>();
  /** When held deliveries of enabled endpoints were last looked for (performance.now()); null: at the next pass. */
  private lastStrandedSweep: number | null = null;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.logs = new ThrottledLog(options.log);
    this.attempts = new DeliveryAttempts(options);
    this.loop = new WakeableLoop({
      name: 'webhook delivery',
      databaseUrl: options.databaseUrl,
      ...(options.connection ? { connection: options.connection } : {}),
      channel: WEBHOOKS_CHANNEL,
      pollMs: options.pollMs ?? 250,
      log: options.log,
      pass: () => this.claimAndSend(),
      leadership: {
        ...(options.leadRetryMs ? { retryMs: options.leadRetryMs } : {}),
        onChange: (leading) => {
          options.log.info(leading ? 'webhook delivery leads' : 'webhook delivery no longer leads');
          if (!leading) return;
          // Everything due, at once (a full claim): the previous leader's share included.
          this.lastFullClaim = null;
          this.wake();
        },
      },
    });
  }

  async start() {
    await this.loop.start();
  }

  /**
   * Stops claiming and waits for the attempts in flight, at most stopWaitMs for their answers: those still unanswered
   * then (an endpoint timing out) are given back unrecorded, so that the process stops within its grace and any
   * replica's next claim sends them again at once rather than after their lease. Their endpoint may get such a
   * webhook twice, with the same webhook-id (at least once, as when a lease runs out).
   */
  async stop() {
    await this.loop.stop();
    const attempts = Promise.allSettled([...this.inFlight.values()]);
    const answered = await withTimeout(attempts, this.options.stopWaitMs ?? STOP_WAIT_MS).then(
      () => true,
      () => false,
    );
    if (answered) return;
    const unanswered = this.attempts.giveBackUnanswered();
    await this.options.storage.deliveries
      .releaseDeliveries(unanswered)
      .catch((error: Error) =>
        this.options.log.warn(
          { err: error, deliveries: unanswered.length },
          'could not give back the webhook attempts unanswered at stop; they are sent again after their lease',
        ),
      );
    // The others are being recorded.
    await Promise.allSettled(
      [...this.inFlight].filter(([id]) => !this.attempts.isGivenBack(id)).map(([, work]) => work),
    );
  }

  wake() {
    this.loop.wake();
  }

  /**
   * Runs passes until none is pending and no attempt is in flight (tests, before and after moving the clock). A pass
   * woken (by a NOTIFY) while the attempts are awaited may launch more: those are awaited too, or one could start at
   * the old time and finish, and schedule its retry, at the new one.
   */
  async settle() {
    this.lastFullClaim = null;
    for (;;) {
      await this.loop.settle();
      if (this.inFlight.size === 0) return;
      await Promise.allSettled([...this.inFlight.values()]);
    }
  }

  /** How long a claimed or handed-over delivery is reserved for this worker. */
  get leaseMs() {
    return this.options.leaseMs;
  }

  /**
   * Deliveries leased to this worker by another part of this process (the dispatcher's claim, in its transaction):
   * sent at once, as if this worker had claimed them, within its limits; those beyond them are given back for the
   * next claim.
   */
  take(deliveries: ClaimedDelivery[]) {
    const perEndpoint = this.options.perEndpoint ?? 10;
    let room = this.loop.stopped ? 0 : this.room();
    const refused: string[] = [];
    for (const delivery of deliveries) {
      if (room > 0 && (this.perEndpointCount.get(delivery.endpointId) ?? 0) < perEndpoint) {
        this.launch(delivery, perEndpoint);
        room--;
      } else {
        refused.push(delivery.id);
      }
    }
    if (refused.length === 0) return;
    // Given back with their old due times: the next claim reads everything.
    this.backlog = true;
    // Not given back (the database is gone): their lease runs out and a claim takes them then.
    void this.options.storage.deliveries.releaseDeliveries(refused).then(
      () => this.wake(),
      (error: Error) => {
        this.logs.error(
          'release',
          { err: error },
          'webhook deliveries handed over could not be given back; sent after their lease',
        );
      },
    );
  }

  private async claimAndSend() {
    const perEndpoint = this.options.perEndpoint ?? 10;
    const room = this.room();
    if (room <= 0) return;
    await this.options.requestsFirst?.();
    const now = this.options.now();
    if (this.lastStrandedSweep === null || performance.now() - this.lastStrandedSweep >= STRANDED_EVERY_MS) {
      this.lastStrandedSweep = performance.now();
      const released = await this.options.storage.deliveries.releaseStrandedDeliveries(now);
      if (released > 0) this.options.log.warn({ released }, 'held webhook deliveries of enabled endpoints released');
    }
    const since = this.lastFullClaim;
    const full =
      this.backlog ||
      since === null ||
      performance.now() - this.lastFullClaimAt >= FULL_CLAIM_EVERY_MS ||
      now.getTime() < since;
    if (full) {
      this.lastFullClaim = now.getTime();
      this.lastFullClaimAt = performance.now();
    }
    // This claim answers the backlog asked for so far. One asked for while it runs (an attempt finished at its
    // endpoint's cap, deliveries handed back) is kept for the next: overwritten here, it left the next claim reading
    // only recent deliveries.
    this.backlog = false;
    let leftBehind = true;
    try {
      const claimed = await this.options.storage.deliveries.claimDueDeliveries({
        now,
        inFlight: this.perEndpointCount,
        perEndpoint,
        limit: room,
        leaseUntil: new Date(now.getTime() + this.options.leaseMs),
        dueSince: full ? undefined : new Date(since - RECENT_MARGIN_MS),
      });
      let capped = false;
      for (const delivery of claimed) if (this.launch(delivery, perEndpoint) >= perEndpoint) capped = true;
      leftBehind = capped || claimed.length >= Math.min(room, CLAIM_WINDOW);
    } finally {
      if (leftBehind) this.backlog = true;
    }
  }

  /** How many more attempts may start now. */
  private room(): number {
    const max = this.options.maxInFlight ?? 200;
    const working = this.inFlight.size - this.stalled.size;
    return Math.min(max - working, max + (this.options.maxStalled ?? 2_000) - this.inFlight.size);
  }

  /** Sends a delivery leased to this worker; returns the attempts now in flight for its endpoint. */
  private launch(delivery: ClaimedDelivery, perEndpoint: number): number {
    const count = (this.perEndpointCount.get(delivery.endpointId) ?? 0) + 1;
    this.perEndpointCount.set(delivery.endpointId, count);
    // A failure to record the attempt (e.g. no pooled connection in time) must not reject unobserved, which
    // would stop the process: the lease runs out and the delivery is sent again (at least once).
    const startedAt = performance.now();
    if (this.stalling.has(delivery.endpointId)) this.stalled.add(delivery.id);
    const stalling = setTimeout(() => {
      this.stalled.add(delivery.id);
      this.stalling.add(delivery.endpointId);
      // Its place is free for the others.
      if (this.backlog) this.wake();
    }, STALLED_AFTER_MS);
    stalling.unref();
    const work = this.attempts
      .run(delivery)
      .then(
        () => this.logs.recovered('record', 'webhook attempts are recorded again'),
        (error: Error) => {
          this.logs.error(
            'record',
            { err: error, deliveryId: delivery.id },
            'webhook attempt could not be recorded; retried after its lease',
          );
        },
      )
      .finally(() => {
        clearTimeout(stalling);
        this.stalled.delete(delivery.id);
        if (performance.now() - startedAt < STALLED_AFTER_MS) this.stalling.delete(delivery.endpointId);
        this.inFlight.delete(delivery.id);
        const left = (this.perEndpointCount.get(delivery.endpointId) ?? 1) - 1;
        if (left <= 0) this.perEndpointCount.delete(delivery.endpointId);
        else this.perEndpointCount.set(delivery.endpointId, left);
        // A slot is free: there may be more due for any endpoint when the last claim was full, and for this one if it
        // was at its cap. Claims passed over its due deliveries however old they are, so the next claim reads every
        // due delivery: one woken for new deliveries would miss those due before the last full claim, and a backlog
        // older than RECENT_MARGIN_MS went out a cap's worth per full claim (FULL_CLAIM_EVERY_MS).
        if (left + 1 >= perEndpoint) this.backlog = true;
        if (this.backlog) this.wake();
      });
    this.inFlight.set(delivery.id, work);
    return count;
  }
}
