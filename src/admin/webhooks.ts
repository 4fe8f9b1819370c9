// An account's webhook endpoint (set, show, enable again after a 410), and replaying a delivery.
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../domain/ids.js';
import { generateWebhookSecret } from '../domain/webhook-secret.js';
import { countOpenDeliveries, findDeliveryWithEndpoint, requeueDelivery } from '../storage/deliveries.js';
import { enableEndpoint, findEndpointOfAccount, upsertEndpoint } from '../storage/endpoints.js';
import { webhookUrlProblem } from '../webhooks/url-policy.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';

/** Sets (or replaces) the endpoint; the signing secret is new and returned once. */
export async function setWebhook(prisma: PrismaClient, accountId: string, url: string, options: { allowPrivate: boolean }) {
  const account = await findAccount(prisma, accountId);
  const problem = webhookUrlProblem(url, options.allowPrivate);
  if (problem) throw new AdminError(problem);
  const secret = generateWebhookSecret();
  await upsertEndpoint(prisma, account.id, { url, secret });
  return { secret };
}

/** Sends a delivery again with the same webhook-id and body: back to pending, due now. */
export async function replayDelivery(prisma: PrismaClient, deliveryId: string) {
  const delivery = isUuid(deliveryId) ? await findDeliveryWithEndpoint(prisma, deliveryId) : null;
  if (!delivery) throw new AdminError(`No delivery ${deliveryId}`);
  if (!delivery.endpoint.enabled) {
    throw new AdminError(
      `The endpoint is disabled (${delivery.endpoint.disabledReason ?? 'by an operator'}); callctl webhook enable ${delivery.endpoint.accountId} enables it again`,
    );
  }
  // A pending delivery is already due or being sent: replaying it now could send it twice at once.
  if (delivery.status === 'pending') throw new AdminError(`Delivery ${deliveryId} is still pending; it will be sent without a replay`);
  await requeueDelivery(prisma, delivery.id, new Date());
  return { id: delivery.id, status: 'pending' as const };
}

/** The endpoint, whether it is on (and why not), and its deliveries still to send and given up on; null when none is set. */
export async function showWebhook(prisma: PrismaClient, accountId: string) {
  const account = await findAccount(prisma, accountId);
  const endpoint = await findEndpointOfAccount(prisma, account.id);
  if (!endpoint) return { webhook: null };
  const { pending, failed } = await countOpenDeliveries(prisma, endpoint.id);
  return { webhook: { url: endpoint.url, enabled: endpoint.enabled, disabled_reason: endpoint.disabledReason, pending, failed } };
}

/**
 * Switches a disabled endpoint (a 410 Gone) back on, keeping its URL and signing secret: the receiver need not be
 * told a new one. Says what it was before and when it changed, for the operator's record. Deliveries that failed
 * while it was off stay failed (replay sends them).
 */
export async function enableWebhook(prisma: PrismaClient, accountId: string, now = new Date()) {
  const account = await findAccount(prisma, accountId);
  const endpoint = await findEndpointOfAccount(prisma, account.id);
  if (!endpoint) throw new AdminError(`Account ${account.id} has no webhook endpoint; set one with callctl webhook set ${account.id} --url <url>`);
  // Only a disabled endpoint changes: enabling twice at once records one change.
  const changed = await enableEndpoint(prisma, endpoint.id, now);
  return {
    account_id: account.id,
    url: endpoint.url,
    enabled: true,
    previously: { enabled: endpoint.enabled, disabled_reason: endpoint.disabledReason },
    changed_at: changed ? now.toISOString() : null,
  };
}
