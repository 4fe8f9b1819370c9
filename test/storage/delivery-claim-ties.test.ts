// The webhook worker's claim (src/storage/deliveries.ts) over more due deliveries than its window of 1,000, all written
// by one transaction (one due time, one creation time): every endpoint gets its cap, not only those whose first
// deliveries the window happened to hold.
import { expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { bulkInsertCallEvents, bulkInsertCalls, bulkInsertDeliveries } from '../helpers/seed.js';

const ENDPOINTS = 12;
const EACH = 100;
const CAP = 10;

it('gives every endpoint its cap when more than the window are due at the same instant', async () => {
  const { prisma } = await freshPrisma();
  const storage = storageOf(prisma);
  const owners: { accountId: string; agentId: string; endpointId: string }[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const tenant = await createTenant(storage);
    await setWebhook(storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: new Date() });
    const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId: tenant.accountId } });
    owners.push({ accountId: tenant.accountId, agentId: tenant.agentId, endpointId: endpoint.id });
  }
  // One endpoint's deliveries after another's (by the endpoint's id), all at one instant: the order they are read in
  // when their times tie.
  owners.sort((x, y) => (x.endpointId < y.endpointId ? -1 : 1));
  const at = new Date();
  const due = new Date(at.getTime() - 1_000);
  const wanted = owners.flatMap((owner) => Array.from({ length: EACH }, () => owner));
  const calls = await bulkInsertCalls(
    prisma,
    wanted.map((o) => ({
      accountId: o.accountId,
      agentId: o.agentId,
      status: 'completed' as const,
      createdAt: at,
      expiresAt: at,
    })),
  );
  const events = await bulkInsertCallEvents(
    prisma,
    calls.map((callId) => ({
      callId,
      fromStatus: 'in_progress',
      toStatus: 'completed',
      source: 'provider',
      occurredAt: at,
    })),
  );
  await bulkInsertDeliveries(
    prisma,
    wanted.map((o, i) => ({
      endpointId: o.endpointId,
      callId: calls[i]!,
      callEventId: events[i]!,
      eventType: 'call.completed',
      nextAttemptAt: due,
      createdAt: due,
    })),
  );
  const now = new Date();
  const claimed = await storage.deliveries.claimDueDeliveries({
    now,
    inFlight: new Map(),
    perEndpoint: CAP,
    limit: 1_000,
    leaseUntil: new Date(now.getTime() + 60_000),
  });
  const perEndpoint = new Map<string, number>();
  for (const d of claimed) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
  expect([...perEndpoint.values()]).toEqual(Array.from({ length: ENDPOINTS }, () => CAP));
});
