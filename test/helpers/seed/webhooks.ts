// Webhook endpoints and deliveries written straight to the database: the delivery worker's history and states,
// and many rows at once (test/helpers/seed.ts says when a test writes directly).
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';
import { bulk } from './bulk.js';
import { setWebhook } from '../../../src/admin/webhooks.js';
import { storageOf } from '../database.js';

/**
 * A call.completed delivery of `callId` to the account's endpoint (set on first use), already failed after two
 * attempts (a 500, then a timeout): it can be resent.
 */
export async function insertFailedDelivery(prisma: PrismaClient, accountId: string, callId: string): Promise<string> {
  if (!(await prisma.webhookEndpoint.findUnique({ where: { accountId } }))) {
    await setWebhook(storageOf(prisma), accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: new Date() });
  }
  const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId } });
  const event = await prisma.callEvent.findFirstOrThrow({ where: { callId }, orderBy: { occurredAt: 'desc' } });
  const delivery = await prisma.webhookDelivery.create({
    data: {
      endpointId: endpoint.id,
      callId,
      callEventId: event.id,
      eventType: 'call.completed',
      payload: '{}',
      status: 'failed',
      attemptCount: 2,
      completedAt: event.occurredAt,
      attempts: {
        create: [
          { attemptNumber: 1, startedAt: event.occurredAt, durationMs: 37, responseStatus: 500, error: null },
          {
            attemptNumber: 2,
            startedAt: new Date(event.occurredAt.getTime() + 5_000),
            durationMs: 15_000,
            responseStatus: null,
            error: 'timed out after 15000 ms <b>',
          },
        ],
      },
    },
  });
  return delivery.id;
}

/**
 * An endpoint's state as the delivery worker keeps it (failures in a row, held or disabled since a time, a target the
 * SSRF guard would refuse today): a test that starts from a worker's history.
 */
export function forceEndpoint(
  prisma: PrismaClient,
  where: Prisma.WebhookEndpointWhereUniqueInput,
  data: Prisma.WebhookEndpointUncheckedUpdateInput,
) {
  return prisma.webhookEndpoint.update({ where, data });
}

/** An account whose endpoint is gone after it was set (no admin function removes one; the account keeps its calls). */
export function deleteEndpoint(prisma: PrismaClient, accountId: string) {
  return prisma.webhookEndpoint.delete({ where: { accountId } });
}

/** Endpoints removed (no admin function removes one; see deleteEndpoint). */
export function deleteEndpoints(prisma: PrismaClient, args: Prisma.WebhookEndpointDeleteManyArgs) {
  return prisma.webhookEndpoint.deleteMany(args);
}

/** Deliveries put in a state only the worker or time reaches (due in the past, claimed, failed after attempts). */
export function forceDeliveries(
  prisma: PrismaClient,
  where: Prisma.WebhookDeliveryWhereInput,
  data: Prisma.WebhookDeliveryUncheckedUpdateManyInput,
) {
  return prisma.webhookDelivery.updateMany({ where, data });
}

/** One delivery as forceDeliveries does; returns the row as it now is. */
export function forceDelivery(prisma: PrismaClient, id: string, data: Prisma.WebhookDeliveryUncheckedUpdateInput) {
  return prisma.webhookDelivery.update({ where: { id }, data });
}

/** A delivery row as written (the worker's history of a call event): `data` says its status and attempts. */
export function insertDeliveryRow(prisma: PrismaClient, data: Prisma.WebhookDeliveryUncheckedCreateInput) {
  return prisma.webhookDelivery.create({ data });
}

/** Many deliveries at once, as the worker's history leaves them (pages of a delivery log). */
export function insertDeliveryRows(prisma: PrismaClient, args: Prisma.WebhookDeliveryCreateManyArgs) {
  return prisma.webhookDelivery.createMany(args);
}

/** An endpoint row as written: a secret or a target the admin functions would not write (a name that no longer resolves). */
export function insertEndpointRow(prisma: PrismaClient, args: Prisma.WebhookEndpointCreateArgs) {
  return prisma.webhookEndpoint.create(args);
}

/** Many endpoints at once (hundreds of clients with a webhook: setWebhook resolves and audits each). */
export function insertEndpointRows(prisma: PrismaClient, args: Prisma.WebhookEndpointCreateManyArgs) {
  return prisma.webhookEndpoint.createMany(args);
}

/**
 * `count` completed calls of `tenant`, each with its last event and a delivery of it to `endpointId` due at `at`, in
 * one statement: a backlog, without NOTIFY (the test wakes the workers when it means to).
 */
export async function insertDueDeliveries(
  prisma: PrismaClient,
  backlog: { accountId: string; agentId: string; endpointId: string; count: number; at: Date },
): Promise<void> {
  await bulk(
    prisma,
    `WITH c AS (
       INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, status, not_before, expires_at,
                          created_at, updated_at, ended_at)
       SELECT gen_random_uuid(), $1, $2, '+14155552671', '+14155550100', 'completed', $5, $5, $5, $5, $5
         FROM generate_series(1, $4::int)
       RETURNING id),
     e AS (
       INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
       SELECT gen_random_uuid(), id, 'in_progress', 'completed', 'provider', $5 FROM c
       RETURNING id, call_id)
     INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at, created_at)
     SELECT gen_random_uuid(), $3, call_id, id, 'call.completed', '{}', $5, $5 FROM e`,
    [backlog.accountId, backlog.agentId, backlog.endpointId, backlog.count, backlog.at],
  );
}
