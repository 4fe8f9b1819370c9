// The webhook delivery worker, one per process: claims due deliveries (a lease, so two processes never send the same
// attempt), sends each independently with a per-endpoint cap so one slow endpoint delays nobody else, and records
// every attempt with its outcome and the next try.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';
import { sqlPool } from '../storage/database.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';
import { classifyStatus, MAX_ATTEMPTS, nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import type { AttemptResult, WebhookSender } from './sender.js';

export const WEBHOOKS_CHANNEL = 'oct_webhooks';

export interface DeliveryWorkerOptions {
  prisma: PrismaClient;
  databaseUrl: string;
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

/**
 * Records a batch of attempts in one statement: each attempt's row (numbered after its delivery's earlier attempts),
 * its delivery's new state, and on 410 Gone its endpoint switched off (the only case with a disabled_reason).
 */
const RECORD_ATTEMPTS = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::int[], $8::text[],
                         $9::timestamptz[], $10::timestamptz[], $11::uuid[], $12::text[])
      AS t(attempt_id, delivery_id, started_at, duration_ms, response_status, error, attempt_count, status, completed_at,
           next_attempt_at, endpoint_id, disabled_reason)
  ), attempt AS (
    INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, response_status, error)
    SELECT i.attempt_id, i.delivery_id, (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = i.delivery_id) + 1,
           i.started_at, i.duration_ms, i.response_status, i.error
      FROM input i
  ), delivery AS (
    UPDATE webhook_deliveries d
       SET attempt_count = i.attempt_count, last_attempt_at = i.started_at, lease_expires_at = NULL, status = i.status::delivery_status,
           completed_at = COALESCE(i.completed_at, d.completed_at), next_attempt_at = COALESCE(i.next_attempt_at, d.next_attempt_at)
      FROM input i WHERE d.id = i.delivery_id
  ), endpoint AS (
    UPDATE webhook_endpoints e SET enabled = false, disabled_reason = i.disabled_reason, updated_at = $13::timestamptz
      FROM input i WHERE e.id = i.endpoint_id AND i.disabled_reason IS NOT NULL
  )
  SELECT 1`;
/**
 * Due deliveries, at most `perEndpoint` per endpoint, leased to this worker. Two workers may pick the same row: the
 * second UPDATE re-checks the lease after the first commits and skips it.
 */
const CLAIM = `
  WITH due AS (
    SELECT id FROM (
      SELECT d.id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.created_at) AS rank
        FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $1)
         AND NOT (d.endpoint_id = ANY($2::uuid[]))
       ORDER BY d.next_attempt_at LIMIT 1000
    ) ranked WHERE rank <= $3 LIMIT $4
  )
  UPDATE webhook_deliveries d SET lease_expires_at = $5
    FROM due, webhook_endpoints e
   WHERE d.id = due.id AND e.id = d.endpoint_id AND d.status = 'pending'
     AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $1)
  RETURNING d.id, d.endpoint_id, d.payload, d.attempt_count, e.url, e.secret, e.enabled`;
/** Attempts recorded by one statement at most. */
const MAX_BATCH = 500;

interface AttemptRecord {
  attemptId: string; deliveryId: string; startedAt: Date; durationMs: number; responseStatus: number | null; error: string | null;
  attemptCount: number; status: 'pending' | 'succeeded' | 'failed'; completedAt: Date | null; nextAttemptAt: Date | null;
  endpointId: string; disabledReason: string | null;
}

interface Claimed { id: string; endpoint_id: string; payload: string; attempt_count: number; url: string; secret: string; enabled: boolean }

export class DeliveryWorker {
  private readonly loop: WakeableLoop;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpointCount = new Map<string, number>();
  private readonly unrecorded: { record: AttemptRecord; done: (error?: Error) => void }[] = [];
  private recording = false;

  constructor(private readonly options: DeliveryWorkerOptions) {
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
    const busy = [...this.perEndpointCount].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    const now = this.options.now();
    const { rows: claimed } = await sqlPool(this.options.prisma).query<Claimed>({
      name: 'oct_claim_deliveries', text: CLAIM, values: [now, busy, perEndpoint, room, new Date(now.getTime() + this.options.leaseMs)],
    });
    for (const delivery of claimed) {
      this.perEndpointCount.set(delivery.endpoint_id, (this.perEndpointCount.get(delivery.endpoint_id) ?? 0) + 1);
      // A failure to record the attempt (e.g. no pooled connection in time) must not reject unobserved, which
      // would stop the process: the lease runs out and the delivery is sent again (at least once).
      const work = this.attempt(delivery).catch((error: Error) => {
        this.options.log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded; retried after its lease');
      }).finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perEndpointCount.get(delivery.endpoint_id) ?? 1) - 1;
        if (left <= 0) this.perEndpointCount.delete(delivery.endpoint_id);
        else this.perEndpointCount.set(delivery.endpoint_id, left);
        // A slot is free: there may be more due for this endpoint.
        this.wake();
      });
      this.inFlight.set(delivery.id, work);
    }
  }

  private async attempt(delivery: Claimed) {
    const { prisma, sender, now: clock } = this.options;
    if (!delivery.enabled) {
      await prisma.webhookDelivery.update({ where: { id: delivery.id }, data: { status: 'failed', completedAt: clock(), leaseExpiresAt: null } });
      return;
    }
    const startedAt = clock();
    const result = await sender.send(delivery, delivery.id, delivery.payload, startedAt);
    const finishedAt = clock();
    const attemptsMade = delivery.attempt_count + 1;
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
      nextAttemptAt, endpointId: delivery.endpoint_id, disabledReason,
    });
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

  private async writeRecords(records: AttemptRecord[]) {
    const column = <K extends keyof AttemptRecord>(key: K) => records.map((r) => r[key]);
    await sqlPool(this.options.prisma).query({
      name: 'oct_record_webhook_attempts',
      text: RECORD_ATTEMPTS,
      values: [
        column('attemptId'), column('deliveryId'), column('startedAt'), column('durationMs'), column('responseStatus'), column('error'),
        column('attemptCount'), column('status'), column('completedAt'), column('nextAttemptAt'), column('endpointId'),
        column('disabledReason'), new Date(),
      ],
    });
  }
}
