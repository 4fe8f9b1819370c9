// The webhook_endpoints table (one endpoint per account): setting, reading and re-enabling it. Prisma Client only; the
// worker switches an endpoint off inside its attempt records (storage/deliveries.ts), in the same statement.
import type { PrismaClient, WebhookEndpoint } from '../generated/prisma/client.js';

/** Sets the account's endpoint, or replaces it: the new URL and secret, enabled. */
export async function upsertEndpoint(prisma: PrismaClient, accountId: string, endpoint: { url: string; secret: string }): Promise<void> {
  const { url, secret } = endpoint;
  await prisma.webhookEndpoint.upsert({
    where: { accountId },
    create: { accountId, url, secret },
    update: { url, secret, enabled: true, disabledReason: null },
  });
}

export async function findEndpointOfAccount(prisma: PrismaClient, accountId: string): Promise<WebhookEndpoint | null> {
  return prisma.webhookEndpoint.findUnique({ where: { accountId } });
}

/** The account an endpoint belongs to, or null when there is no such endpoint. */
export async function accountOfEndpoint(prisma: PrismaClient, endpointId: string): Promise<string | null> {
  const endpoint = await prisma.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { accountId: true } });
  return endpoint?.accountId ?? null;
}

/** Switches a disabled endpoint back on; false when it was already on (two at once: one changes it). */
export async function enableEndpoint(prisma: PrismaClient, endpointId: string, now: Date): Promise<boolean> {
  const { count } = await prisma.webhookEndpoint.updateMany({ where: { id: endpointId, enabled: false }, data: { enabled: true, disabledReason: null, updatedAt: now } });
  return count === 1;
}
