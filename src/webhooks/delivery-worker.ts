// The webhook delivery worker, one per process: claims due deliveries (a lease, so two processes never send the same
// attempt), sends each independently with a per-endpoint cap so one slow endpoint delays nobody else, and records
// every attempt with its outcome and the next try.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';
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

interface Claimed { id: string; endpoint_id: string; payload: string; attempt_count: number; url: string; secret: string; enabled: boolean }

export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpointCount = new Map<string, number>();

  constructor(private readonly options: DeliveryWorkerOptions) {}

  async start() {
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 250);
    this.timer.unref();
    this.wake();
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.listener?.end().catch(() => undefined);
    await this.running;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  wake() {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.claimAndSend()
      .catch((error: Error) => this.options.log.error({ err: error }, 'webhook delivery pass failed'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Runs passes until none is pending and waits for their attempts (tests, after moving the clock). */
  async settle() {
    this.wake();
    while (this.running) await this.running;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private async listen() {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('notification', () => this.wake());
    client.on('error', () => {
      this.listener = null;
      if (!this.stopped) setTimeout(() => void this.listen().catch(() => undefined), 1_000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WEBHOOKS_CHANNEL}`);
      this.listener = client;
    } catch {
      await client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen().catch(() => undefined), 1_000).unref();
    }
  }

  private async claimAndSend() {
    const perEndpoint = this.options.perEndpoint ?? 10;
    const room = (this.options.maxInFlight ?? 200) - this.inFlight.size;
    if (room <= 0) return;
    const busy = [...this.perEndpointCount].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    const now = this.options.now();
    // Two workers may pick the same row: the second UPDATE re-checks the lease after the first commits and skips it.
    const claimed = await this.options.prisma.$queryRaw<Claimed[]>`
      WITH due AS (
        SELECT id FROM (
          SELECT d.id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.created_at) AS rank
            FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
             AND (d.lease_expires_at IS NULL OR d.lease_expires_at < ${now})
             AND NOT (d.endpoint_id = ANY(${busy}::uuid[]))
           ORDER BY d.next_attempt_at LIMIT 1000
        ) ranked WHERE rank <= ${perEndpoint} LIMIT ${room}
      )
      UPDATE webhook_deliveries d SET lease_expires_at = ${new Date(now.getTime() + this.options.leaseMs)}
        FROM due, webhook_endpoints e
       WHERE d.id = due.id AND e.id = d.endpoint_id AND d.status = 'pending'
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at < ${now})
      RETURNING d.id, d.endpoint_id, d.payload, d.attempt_count, e.url, e.secret, e.enabled`;
    for (const delivery of claimed) {
      this.perEndpointCount.set(delivery.endpoint_id, (this.perEndpointCount.get(delivery.endpoint_id) ?? 0) + 1);
      const work = this.attempt(delivery).finally(() => {
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

    await prisma.$transaction(async (tx) => {
      const attemptNumber = (await tx.webhookAttempt.count({ where: { deliveryId: delivery.id } })) + 1;
      await tx.webhookAttempt.create({
        data: { deliveryId: delivery.id, attemptNumber, startedAt, durationMs: result.durationMs, responseStatus: result.status, error: result.error?.slice(0, 500) ?? null },
      });
      const common = { attemptCount: attemptsMade, lastAttemptAt: startedAt, leaseExpiresAt: null };
      if (outcome === 'succeeded') {
        await tx.webhookDelivery.update({ where: { id: delivery.id }, data: { ...common, status: 'succeeded', completedAt: finishedAt } });
      } else if (outcome === 'gone') {
        await tx.webhookDelivery.update({ where: { id: delivery.id }, data: { ...common, status: 'failed', completedAt: finishedAt } });
        await tx.webhookEndpoint.update({ where: { id: delivery.endpoint_id }, data: { enabled: false, disabledReason: `answered 410 Gone at ${finishedAt.toISOString()}` } });
      } else if (exhausted) {
        await tx.webhookDelivery.update({ where: { id: delivery.id }, data: { ...common, status: 'failed', completedAt: finishedAt } });
      } else {
        await tx.webhookDelivery.update({ where: { id: delivery.id }, data: { ...common, nextAttemptAt: new Date(finishedAt.getTime() + delay!) } });
      }
    });
  }
}
