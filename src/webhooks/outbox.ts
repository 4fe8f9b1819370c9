// The outbox: an event and its pending delivery are written in the transaction that changes the call, so a crash
// can lose neither. The body is frozen here; every attempt sends exactly these bytes.
import type { Call, Prisma } from '../generated/prisma/client.js';
import type { WebhookEventType } from '../domain/call-lifecycle.js';
import { callView } from '../schemas/call.js';
import type { WebhookEvent } from '../schemas/webhook.js';
import { WEBHOOKS_CHANNEL } from './delivery-worker.js';

export async function enqueueWebhook(tx: Prisma.TransactionClient, call: Call, callEventId: string, type: WebhookEventType, at: Date) {
  const endpoint = await tx.webhookEndpoint.findUnique({ where: { accountId: call.accountId }, select: { id: true, enabled: true } });
  if (!endpoint || !endpoint.enabled) return null;
  const body: WebhookEvent = { type, timestamp: at.toISOString(), data: callView(call) } as WebhookEvent;
  const delivery = await tx.webhookDelivery.create({
    data: { endpointId: endpoint.id, callId: call.id, callEventId, eventType: type, payload: JSON.stringify(body), nextAttemptAt: at },
    select: { id: true },
  });
  // Delivered on commit: NOTIFY is transactional.
  await tx.$executeRaw`SELECT pg_notify(${WEBHOOKS_CHANNEL}, ${endpoint.id})`;
  return delivery;
}
