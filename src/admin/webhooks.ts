// An account's webhook endpoint, and replaying a delivery.
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../domain/ids.js';
import { generateWebhookSecret } from '../domain/webhook-secret.js';
import { webhookUrlProblem } from '../webhooks/url-policy.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';

/** Sets (or replaces) the endpoint; the signing secret is new and returned once. */
export async function setWebhook(prisma: PrismaClient, accountId: string, url: string, options: { allowPrivate: boolean }) {
  const account = await findAccount(prisma, accountId);
  const problem = webhookUrlProblem(url, options.allowPrivate);
  if (problem) throw new AdminError(problem);
  const secret = generateWebhookSecret();
  await prisma.webhookEndpoint.upsert({
    where: { accountId: account.id },
    create: { accountId: account.id, url, secret },
    update: { url, secret, enabled: true, disabledReason: null },
  });
  return { secret };
}

/** Sends a delivery again with the same webhook-id and body: back to pending, due now. */
export async function replayDelivery(prisma: PrismaClient, deliveryId: string) {
  const delivery = isUuid(deliveryId) ? await prisma.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { endpoint: true } }) : null;
  if (!delivery) throw new AdminError(`No delivery ${deliveryId}`);
  if (!delivery.endpoint.enabled) {
    throw new AdminError(`The endpoint is disabled (${delivery.endpoint.disabledReason ?? 'by an operator'}); set the webhook again to enable it`);
  }
  // A pending delivery is already due or being sent: replaying it now could send it twice at once.
  if (delivery.status === 'pending') throw new AdminError(`Delivery ${deliveryId} is still pending; it will be sent without a replay`);
  await prisma.webhookDelivery.update({
    where: { id: delivery.id },
    // A fresh retry schedule; the attempts so far stay on record.
    data: { status: 'pending', nextAttemptAt: new Date(), completedAt: null, leaseExpiresAt: null, attemptCount: 0 },
  });
  return { id: delivery.id, status: 'pending' as const };
}
