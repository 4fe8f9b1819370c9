// The webhook_deliveries and webhook_attempts tables for the dashboard and callctl (Prisma Client): deliveries held
// while their endpoint is disabled and released when it is enabled again, the operator's replay, resend and counts,
// and an endpoint's delivery log. The worker's claims and attempt records are in delivery-work.ts, on the pool.
import type { DeliveryStatus } from '../../schemas/vocabulary.js';
import { WEBHOOKS_CHANNEL } from './channels.js';
import { PrismaRepository } from './driver.js';

/**
 * The SQL of a held delivery's reason, from the SQL of its endpoint's disabled_reason: every statement that holds a
 * delivery words it the same way.
 */
export function heldReason(disabledReason: string): string {
  return `format('endpoint disabled (%s)', coalesce(${disabledReason}, 'switched off'))`;
}

/** A held delivery released: pending, due at `now`, with a fresh retry schedule (its attempts so far stay on record). */
const RELEASED = (now: Date) => ({
  status: 'pending' as const,
  heldReason: null,
  nextAttemptAt: now,
  completedAt: null,
  attemptCount: 0,
});

/** A delivery sent again: pending, due at `now`, with a fresh retry schedule; the attempts so far stay on record. */
const REQUEUED = (now: Date) => ({
  status: 'pending' as const,
  heldReason: null,
  nextAttemptAt: now,
  completedAt: null,
  leaseExpiresAt: null,
  attemptCount: 0,
});

/** Where a page of the delivery log starts: the delivery before which (newest first) it begins. */
export interface DeliveryCursor {
  createdAt: Date;
  id: string;
}

export interface LoggedAttempt {
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
  /** The first 2 KB of the answer's body; null without an answer (or for attempts made before it was kept). */
  responseBody: string | null;
  responseBodyTruncated: boolean;
}

export interface LoggedDelivery {
  id: string;
  eventType: string;
  callId: string;
  /** The number the call dialled (the call is the account's own: deliveries go to its account's endpoint). */
  phoneNumber: string;
  /** The body sent, frozen when the event happened. */
  payload: string;
  status: DeliveryStatus;
  /** Why it is held (status held), else null. */
  heldReason: string | null;
  createdAt: Date;
  nextAttemptAt: Date;
  attempts: LoggedAttempt[];
}

/** Which of an endpoint's deliveries the log shows: each filter set narrows it. */
export interface DeliveryLogFilters {
  status?: DeliveryStatus | undefined;
  eventType?: string | undefined;
  /** Created at or after it. */
  from?: Date | undefined;
  /** Created before it. */
  to?: Date | undefined;
}

/** Attempts shown per delivery (the newest; replays add to a delivery's record). */
const ATTEMPTS_SHOWN = 30;

/** The endpoint's deliveries still to send, held (since the oldest was made), and given up on. */
export interface OpenDeliveries {
  pending: number;
  held: number;
  heldSince: Date | null;
  failed: number;
}

export class DeliveryRepository extends PrismaRepository {
  /**
   * Within the transaction that enables the endpoint (after locking it, storage/endpoints.ts): every held delivery of
   * the endpoint becomes pending, due now, and the workers are woken. Returns how many.
   */
  async releaseHeldDeliveries(endpointId: string, now: Date): Promise<number> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { endpointId, status: 'held' },
      data: RELEASED(now),
    });
    // Hand-written: NOTIFY has no Prisma form; sent on commit.
    if (count > 0) await this.prisma.$executeRaw`SELECT pg_notify(${WEBHOOKS_CHANNEL}, ${endpointId})`;
    return count;
  }

  /** A delivery with its endpoint, or null. */
  async findDeliveryWithEndpoint(deliveryId: string) {
    return this.prisma.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { endpoint: true } });
  }

  /**
   * Sends a delivery again, in one conditional statement (UPDATE ... WHERE status = ...): only when it is not pending
   * and, with `seen`, still in the state the caller read (its status and the time of its last attempt). Of concurrent
   * resends one changes it and the others find it changed, so none is sent twice. Returns whether it changed.
   */
  async requeueDelivery(
    deliveryId: string,
    now: Date,
    seen?: { status: Exclude<DeliveryStatus, 'pending'>; lastAttemptAt: Date | null },
  ): Promise<boolean> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: {
        id: deliveryId,
        ...(seen ? { status: seen.status, lastAttemptAt: seen.lastAttemptAt } : { status: { not: 'pending' } }),
      },
      data: REQUEUED(now),
    });
    return count === 1;
  }

  /**
   * Sends again every failed delivery of the endpoint created at or after `since`, in one statement (served by the
   * (endpoint_id, status) index); returns how many. Conditional as requeueDelivery is: a concurrent resend waits for
   * this one's row locks, then finds those rows pending and leaves them.
   */
  async requeueFailedDeliveriesSince(endpointId: string, since: Date, now: Date): Promise<number> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { endpointId, status: 'failed', createdAt: { gte: since } },
      data: REQUEUED(now),
    });
    return count;
  }

  /**
   * One page of an endpoint's deliveries, newest first, each with its attempts (oldest first), and the cursor of the
   * next page (null at the end). Keyset on (created_at, id), within the (endpoint_id, created_at, id) index range or,
   * filtered by status, the (endpoint_id, status, created_at, id) one: the cost does not grow with the page number.
   */
  async listEndpointDeliveries(
    endpointId: string,
    page: { filters?: DeliveryLogFilters; before?: DeliveryCursor | undefined; limit: number },
  ): Promise<{ deliveries: LoggedDelivery[]; next: DeliveryCursor | null }> {
    const { status, eventType, from, to } = page.filters ?? {};
    // The `lte` bounds the index range; Prisma has no row comparison for the rest.
    const upper = page.before && (!to || page.before.createdAt < to) ? page.before.createdAt : undefined;
    const createdAt = {
      ...(from ? { gte: from } : {}),
      ...(to && !upper ? { lt: to } : {}),
      ...(upper ? { lte: upper } : {}),
    };
    const before = page.before
      ? {
          OR: [
            { createdAt: { lt: page.before.createdAt } },
            { createdAt: page.before.createdAt, id: { lt: page.before.id } },
          ],
        }
      : {};
    const rows = await this.prisma.webhookDelivery.findMany({
      where: {
        endpointId,
        ...(status ? { status } : {}),
        ...(eventType ? { eventType } : {}),
        ...(Object.keys(createdAt).length ? { createdAt } : {}),
        ...before,
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit + 1,
      select: {
        id: true,
        eventType: true,
        callId: true,
        // One more statement for the page's calls (by id, the primary key), not one per delivery.
        call: { select: { phoneNumber: true } },
        payload: true,
        status: true,
        heldReason: true,
        createdAt: true,
        nextAttemptAt: true,
        attempts: {
          orderBy: { attemptNumber: 'desc' },
          take: ATTEMPTS_SHOWN,
          select: {
            attemptNumber: true,
            startedAt: true,
            durationMs: true,
            responseStatus: true,
            error: true,
            responseBody: true,
            responseBodyTruncated: true,
          },
        },
      },
    });
    const deliveries = rows
      .slice(0, page.limit)
      .map(({ call, ...row }) => ({ ...row, phoneNumber: call.phoneNumber, attempts: row.attempts.reverse() }));
    const last = deliveries.at(-1);
    return { deliveries, next: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  /** How many of the endpoint's deliveries are still to send, held while it is disabled, and given up on. */
  async countOpenDeliveries(endpointId: string): Promise<OpenDeliveries> {
    const counts = await this.prisma.webhookDelivery.groupBy({
      by: ['status'],
      where: { endpointId, status: { in: ['pending', 'held', 'failed'] } },
      _count: true,
      _min: { createdAt: true },
    });
    const of = (status: DeliveryStatus) => counts.find((c) => c.status === status);
    return {
      pending: of('pending')?._count ?? 0,
      held: of('held')?._count ?? 0,
      heldSince: of('held')?._min.createdAt ?? null,
      failed: of('failed')?._count ?? 0,
    };
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
