// The webhook_endpoints table (one endpoint per account): setting, reading and re-enabling it. Prisma Client only; the
// worker switches an endpoint off inside its attempt records (storage/deliveries.ts), in the same statement.
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import type { Db } from './users.js';

/**
 * Sets the account's endpoint, or replaces it: the new URL and secret, enabled. With `replaces` (the `updatedAt` of
 * the endpoint the caller saw, or null for none) nothing changes unless the endpoint is still that one: a form sent
 * twice (a reload, a double click) sets it once. Returns whether it changed.
 */
export async function upsertEndpoint(
  db: Db,
  accountId: string,
  endpoint: { url: string; secret: string },
  options: { now?: Date; replaces?: Date | null } = {},
): Promise<boolean> {
  const { url, secret } = endpoint;
  const now = options.now ?? new Date();
  if (options.replaces === undefined) {
    await db.webhookEndpoint.upsert({
      where: { accountId },
      create: { accountId, url, secret, createdAt: now, updatedAt: now },
      update: { url, secret, enabled: true, disabledReason: null, updatedAt: now },
    });
    return true;
  }
  if (options.replaces === null) {
    // One account, one endpoint (unique account_id): of two creations at once, one inserts.
    const { count } = await db.webhookEndpoint.createMany({ data: [{ accountId, url, secret, createdAt: now, updatedAt: now }], skipDuplicates: true });
    return count === 1;
  }
  const { count } = await db.webhookEndpoint.updateMany({
    where: { accountId, updatedAt: options.replaces },
    data: { url, secret, enabled: true, disabledReason: null, updatedAt: now },
  });
  return count === 1;
}

export async function findEndpointOfAccount(db: Db, accountId: string): Promise<WebhookEndpoint | null> {
  return db.webhookEndpoint.findUnique({ where: { accountId } });
}

/** The account an endpoint belongs to, or null when there is no such endpoint. */
export async function accountOfEndpoint(db: Db, endpointId: string): Promise<string | null> {
  const endpoint = await db.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { accountId: true } });
  return endpoint?.accountId ?? null;
}

/** Switches a disabled endpoint back on; false when it was already on (two at once: one changes it). */
export async function enableEndpoint(db: Db, endpointId: string, now: Date): Promise<boolean> {
  const { count } = await db.webhookEndpoint.updateMany({ where: { id: endpointId, enabled: false }, data: { enabled: true, disabledReason: null, updatedAt: now } });
  return count === 1;
}
