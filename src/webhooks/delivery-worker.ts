// The webhook delivery worker, one per process: claims due deliveries (a lease, so two processes never send the same
// attempt), sends each independently with a per-endpoint cap so one slow endpoint delays nobody else, and records
// every attempt with its outcome and the next try. An endpoint that answers 410 Gone is switched off, and audited as
// the service's doing, in the statement that records the attempt.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { WEBHOOKS_CHANNEL } from '../storage/channels.js';
import { sqlPool } from '../storage/database.js';
import { claimDueDeliveries, failUnsentDelivery, recordAttempts, type AttemptRecord, type ClaimedDelivery } from '../storage/deliveries.js';
import { accountOfEndpoint } from '../storage/endpoints.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';
import { classifyStatus, MAX_ATTEMPTS, nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import type { AttemptResult, WebhookSender } from './sender.js';

export interface DeliveryWorkerOptions {
  /** The background pool's client (fastify.backgroundPrisma): this work waits for connections, requests do not. */
  prisma: PrismaClient;
  databaseUrl: string;
  /** Awaited before a claim: background work gives way to waiting requests (src/jobs/requests-first.ts). */
  requestsFirst?: () => Promise<void>;
  sender: WebhookSender;
  now: () => Date;
  log: FastifyBaseLogger;
  pollMs?: number;
  /** In-flight attempts per endpoint in this process. */
  perEndpoint?: number;
  /** In-flight attempts in this process. */
  maxInFlight?: number;
  random?: () => number;
  /** How long a claimed delivery is reserved for this worker; must exceed the send timeout. */
  leaseMs: number;
  /** Observes each attempt (metrics). */
  onAttempt?: (outcome: string, result: AttemptResult) => void;
}

/** Attempts recorded by one statement at most. */
const MAX_BATCH = 500;

export class DeliveryWorker {
  private readonly loop: WakeableLoop;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpointCount = new Map<string, number>();
  private readonly unrecorded: { record: AttemptRecord; done: (error?: Error) => void }[] = [];
  private recording = false;
  /** With the database down, every attempt in flight fails to be recorded at once. */
  private readonly logs: ThrottledLog;
  /** Endpoint -> account, for log lines (an endpoint never changes account). */
  private readonly accounts = new Map<string, string>();
  private readonly pool: pg.Pool;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.logs = new ThrottledLog(options.log);
    this.pool = sqlPool(options.prisma);
    this.loop = new WakeableLoop({
      name: 'webhook delivery', databaseUrl: options.databaseUrl, channel: WEBHOOKS_CHANNEL, pollMs: options.pollMs ?? 250, log: options.log, pass: () => this.claimAndSend(),
    });
  }

  async start() {
    await this.loop.start();
  }

  async stop() {
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  wake() {
    this.loop.wake();
  }

  /** Runs passes until none is pending and waits for their attempts (tests, after moving the clock). */
  async settle() {
    await this.loop.settle();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private async claimAndSend() {
    const perEndpoint = this.options.perEndpoint ?? 10;
    const room = (this.options.maxInFlight ?? 200) - this.inFlight.size;
    if (room <= 0) return;
    await this.options.requestsFirst?.();
    const now = this.options.now();
    const claimed = await claimDueDeliveries(this.pool, { now, inFlight: this.perEndpointCount, perEndpoint, limit: room, leaseUntil: new Date(now.getTime() + this.options.leaseMs) });
    for (const delivery of claimed) {
      this.perEndpointCount.set(delivery.endpointId, (this.perEndpointCount.get(delivery.endpointId) ?? 0) + 1);
      // A failure to record the attempt (e.g. no pooled connection in time) must not reject unobserved, which
      // would stop the process: the lease runs out and the delivery is sent again (at least once).
      const work = this.attempt(delivery).then(() => this.logs.recovered('record', 'webhook attempts are recorded again'), (error: Error) => {
        this.logs.error('record', { err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded; retried after its lease');
      }).finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perEndpointCount.get(delivery.endpointId) ?? 1) - 1;
        if (left <= 0) this.perEndpointCount.delete(delivery.endpointId);
        else this.perEndpointCount.set(delivery.endpointId, left);
        // A slot is free: there may be more due for this endpoint.
        this.wake();
      });
      this.inFlight.set(delivery.id, work);
    }
  }

  private async attempt(delivery: ClaimedDelivery) {
    const { prisma, sender, now: clock } = this.options;
    if (!delivery.enabled) {
      await failUnsentDelivery(prisma, delivery.id, clock());
      return;
    }
    const startedAt = clock();
    const result = await sender.send(delivery, delivery.id, delivery.payload, startedAt);
    const finishedAt = clock();
    const attemptsMade = delivery.attemptCount + 1;
    const outcome = classifyStatus(result.status);
    const retryAfterMs = result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter, finishedAt) : null;
    const delay = outcome === 'retry' ? nextAttemptDelay(attemptsMade, { retryAfterMs, ...(this.options.random ? { random: this.options.random } : {}) }) : null;
    const exhausted = outcome === 'retry' && (delay === null || attemptsMade >= MAX_ATTEMPTS);
    this.options.onAttempt?.(exhausted ? 'exhausted' : outcome, result);

    // The attempt and the delivery's new state in one statement (atomic), batched with the attempts finishing at the
    // same time, rather than an interactive transaction of three model queries per attempt: most of the worker's CPU.
    const status: AttemptRecord['status'] = outcome === 'succeeded' ? 'succeeded' : outcome === 'gone' || exhausted ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(finishedAt.getTime() + delay!) : null;
    const disabledReason = outcome === 'gone' ? `answered 410 Gone at ${finishedAt.toISOString()}` : null;
    await this.record({
      attemptId: randomUUID(), deliveryId: delivery.id, startedAt, durationMs: result.durationMs, responseStatus: result.status,
      error: result.error?.slice(0, 500) ?? null, attemptCount: attemptsMade, status, completedAt: status === 'pending' ? null : finishedAt,
      nextAttemptAt, endpointId: delivery.endpointId, disabledReason,
    });
    if (outcome !== 'succeeded') await this.logFailure(delivery, attemptsMade, result, status === 'failed' ? null : nextAttemptAt, outcome === 'gone');
  }

  /** A warning per failed attempt and per endpoint switched off by a 410: ids and the outcome, never the secret or body. */
  private async logFailure(delivery: ClaimedDelivery, attempt: number, result: AttemptResult, nextAttemptAt: Date | null, gone: boolean) {
    const fields = {
      accountId: await this.accountOf(delivery.endpointId),
      endpointId: delivery.endpointId,
      deliveryId: delivery.id,
      attempt,
      ...(result.status === null ? { error: result.error } : { status: result.status }),
      durationMs: result.durationMs,
    };
    const { log } = this.options;
    if (gone) {
      log.warn(fields, 'webhook endpoint disabled: it answered 410 Gone (re-enabled from the dashboard or with callctl webhook enable)');
    } else if (nextAttemptAt) {
      log.warn({ ...fields, nextAttemptAt: nextAttemptAt.toISOString() }, 'webhook attempt failed; will retry');
    } else {
      log.warn(fields, 'webhook attempt failed; no attempts left, the delivery failed (callctl deliveries replay sends it again)');
    }
  }

  private async accountOf(endpointId: string): Promise<string | null> {
    const known = this.accounts.get(endpointId);
    if (known) return known;
    const accountId = await accountOfEndpoint(this.options.prisma, endpointId).catch(() => null);
    if (accountId) this.accounts.set(endpointId, accountId);
    return accountId;
  }

  /**
   * Attempts finishing together are recorded together, one statement per batch and one batch at a time: 200
   * attempts in flight no longer queue 200 statements for the pool (whose 2 s wait they exceeded under load, each
   * such attempt being sent again after its lease). Resolves once the attempt's batch is committed.
   */
  private record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.unrecorded.push({ record, done: (error) => (error ? reject(error) : resolve()) });
      if (!this.recording) {
        this.recording = true;
        setImmediate(() => void this.recordPending());
      }
    });
  }

  private async recordPending() {
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded.splice(0, MAX_BATCH);
      try {
        await this.writeRecords(batch.map((b) => b.record));
        for (const b of batch) b.done();
      } catch (error) {
        // A statement the server refused (e.g. one delivery deleted meanwhile) must not fail the others with it.
        if (batch.length > 1 && error instanceof pg.DatabaseError) {
          for (const b of batch) await this.writeRecords([b.record]).then(() => b.done(), (e: Error) => b.done(e));
        } else {
          for (const b of batch) b.done(error as Error);
        }
      }
    }
    this.recording = false;
  }

  /** With the service's clock: an endpoint switched off is audited at the time of the 410 it answered. */
  private async writeRecords(records: AttemptRecord[]) {
    await recordAttempts(this.pool, records, this.options.now());
  }
}
