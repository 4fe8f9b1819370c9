// The webhook worker's claim (src/storage/deliveries.ts) over more due deliveries than its window of 1,000, all written
// by one transaction (one due time, one creation time): every endpoint gets its cap, not only those whose first
// deliveries the window happened to hold.
import { expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { freshPrisma } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { storageOver } from '../../src/storage/storage.js';

const ENDPOINTS = 12;
const EACH = 100;
const CAP = 10;

it('gives every endpoint its cap when more than the window are due at the same instant', async () => {
  const { prisma } = await freshPrisma();
  const storage = storageOver(prisma);
  for (let i = 0; i < ENDPOINTS; i++) {
    const tenant = await createTenant(storage);
    await setWebhook(storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: new Date() });
  }
  // One statement, one endpoint's deliveries after another's: the order they are read in when their times tie.
  await prisma.$executeRawUnsafe(
    `WITH wanted AS (
       SELECT e.id AS endpoint_id, e.account_id, a.default_agent_id AS agent_id, gen_random_uuid() AS call_id,
              gen_random_uuid() AS event_id, g
         FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id CROSS JOIN generate_series(1, ${EACH}) AS g),
     c AS (
       INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, status, not_before, expires_at,
                          created_at, updated_at)
       SELECT call_id, account_id, agent_id, '+14155552671', '+14155550100', 'completed', now(), now(), now(), now()
         FROM wanted),
     e AS (
       INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
       SELECT event_id, call_id, 'in_progress', 'completed', 'provider', now() FROM wanted)
     INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at, created_at)
     SELECT gen_random_uuid(), endpoint_id, call_id, event_id, 'call.completed', '{}', now() - interval '1 second',
            now() - interval '1 second'
       FROM wanted ORDER BY endpoint_id, g`,
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
