// The webhook_endpoints table (one endpoint per account): setting, reading and re-enabling it (which releases the
// deliveries held while it was disabled). The worker switches an endpoint off inside its attempt records
// (storage/delivery-work.ts), in the same statement. The signing secret is sealed as it is written and opened as it is
// read (secrets.ts): callers see it in clear. Prisma Client, and one row lock in SQL.
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { DeliveryRepository } from './deliveries.js';
import { PrismaRepository } from './driver.js';
import { SECRET_PLACES } from './secrets.js';

export class EndpointRepository extends PrismaRepository {
  /**
   * Sets the account's endpoint, or replaces it: the new URL and secret. A new endpoint is enabled; a replaced one keeps
   * its state (a disabled one stays disabled, its deliveries held, until it is enabled again: the receiver must first
   * learn the new secret). Its deliveries stay its own: each goes to the URL, signed with the secret, of the moment it
   * is sent. With `replaces` (the `updatedAt` of the endpoint the caller saw, or null for none) nothing changes unless
   * the endpoint is still that one: a form sent twice (a reload, a double click) sets it once. Returns whether it
   * changed.
   */
  async upsertEndpoint(
    accountId: string,
    endpoint: { url: string; secret: string },
    options: { now: Date; replaces?: Date | null },
  ): Promise<boolean> {
    const { url } = endpoint;
    const secret = this.secrets.seal(endpoint.secret, SECRET_PLACES.webhookSecret(accountId));
    const now = options.now;
    if (options.replaces === undefined) {
      await this.prisma.webhookEndpoint.upsert({
        where: { accountId },
        create: { accountId, url, secret, createdAt: now, updatedAt: now },
        update: { url, secret, updatedAt: now },
      });
      return true;
    }
    if (options.replaces === null) {
      // One account, one endpoint (unique account_id): of two creations at once, one inserts.
      const { count } = await this.prisma.webhookEndpoint.createMany({
        data: [{ accountId, url, secret, createdAt: now, updatedAt: now }],
        skipDuplicates: true,
      });
      return count === 1;
    }
    const { count } = await this.prisma.webhookEndpoint.updateMany({
      where: { accountId, updatedAt: options.replaces },
      data: { url, secret, updatedAt: now },
    });
    return count === 1;
  }

  /** The account's endpoint, its secret in clear. */
  async findEndpointOfAccount(accountId: string): Promise<WebhookEndpoint | null> {
    const endpoint = await this.prisma.webhookEndpoint.findUnique({ where: { accountId } });
    return (
      endpoint && { ...endpoint, secret: this.secrets.open(endpoint.secret, SECRET_PLACES.webhookSecret(accountId)) }
    );
  }

  /** The account an endpoint belongs to, or null when there is no such endpoint. */
  async accountOfEndpoint(endpointId: string): Promise<string | null> {
    const endpoint = await this.prisma.webhookEndpoint.findUnique({
      where: { id: endpointId },
      select: { accountId: true },
    });
    return endpoint?.accountId ?? null;
  }

  /**
   * Within a transaction: switches a disabled endpoint back on and releases the deliveries held while it was off (due
   * now). `changed` is false when it was already on (two at once: one changes it); held deliveries are released either
   * way. The endpoint is locked FOR UPDATE first: a call transition writing deliveries for it (which reads it FOR KEY
   * SHARE, storage/call-batch.ts) either commits before, and what it held is released here, or waits and writes them
   * pending.
   */
  async enableEndpoint(endpointId: string, now: Date): Promise<{ changed: boolean; released: number }> {
    // Hand-written: a row lock Prisma cannot express.
    await this.prisma.$queryRaw`SELECT id FROM webhook_endpoints WHERE id = ${endpointId}::uuid FOR UPDATE`;
    const { count } = await this.prisma.webhookEndpoint.updateMany({
      where: { id: endpointId, enabled: false },
      data: { enabled: true, disabledReason: null, updatedAt: now },
    });
    const released = await new DeliveryRepository(this.driver).releaseHeldDeliveries(endpointId, now);
    return { changed: count === 1, released };
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
