// A backlog waiting behind an endpoint's cap (src/webhooks/delivery-worker.ts): when a place of that endpoint frees,
// the next claim reads every due delivery, however long ago they came due. A claim woken for new deliveries only
// reads those due since the last full claim, and with no poll in between the backlog was left where it was.
import pg from 'pg';
import { expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { insertDueDeliveries } from '../helpers/seed.js';
import { createTenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';

/** `count` due deliveries to `endpointId` (with their calls and events), due at `at`; the workers are woken. */
async function dueDeliveries(
  app: App,
  db: pg.Client,
  tenant: { accountId: string; agentId: string },
  endpointId: string,
  count: number,
  at: Date,
) {
  await insertDueDeliveries(prismaOf(app), { ...tenant, endpointId, count, at });
  await db.query(`SELECT pg_notify('oct_webhooks', $1)`, [endpointId]);
}

it('sends the rest of a backlog as places of its endpoint free, long after the backlog came due', async () => {
  // The app's clock can be moved: the backlog waits a minute behind the cap. No poll: only a claim's own wakes.
  let offsetMs = 0;
  const { app, databaseUrl } = await buildTestApp({
    env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    clock: () => new Date(Date.now() + offsetMs),
    jobs: { webhooks: { pollMs: 3_600_000, perEndpoint: 2, maxInFlight: 50, timeoutMs: 20_000 } },
  });
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const answers: (() => void)[] = [];
  try {
    const slow = await startReceiver();
    slow.respond = () => new Promise((resolve) => answers.push(() => resolve({ status: 200 })));
    const other = await startReceiver();
    const tenants = [await createTenant(app.storage), await createTenant(app.storage)] as const;
    await setWebhook(app.storage, tenants[0].accountId, slow.url, { allowPrivate: true, now: app.now() });
    await setWebhook(app.storage, tenants[1].accountId, other.url, { allowPrivate: true, now: app.now() });
    const endpointOf = async (accountId: string) =>
      (await db.query<{ id: string }>('SELECT id FROM webhook_endpoints WHERE account_id = $1', [accountId])).rows[0]!
        .id;
    const [slowEndpoint, otherEndpoint] = [
      await endpointOf(tenants[0].accountId),
      await endpointOf(tenants[1].accountId),
    ];

    // Six due to the slow endpoint: two go out (its cap) and are not answered yet.
    await dueDeliveries(app, db, tenants[0], slowEndpoint, 6, app.now());
    await slow.waitFor(2);
    // A minute later, another endpoint's delivery is claimed and sent: that claim left nothing behind but the slow
    // endpoint's four (passed over: it was at its cap).
    offsetMs = 60_000;
    await dueDeliveries(app, db, tenants[1], otherEndpoint, 1, app.now());
    await other.waitFor(1);

    // Each answer frees a place: the next of the backlog goes out, then the next, to the last.
    for (let sent = 2; sent < 6; sent++) {
      answers.shift()!();
      await slow.waitFor(sent + 1);
    }
    expect(slow.received).toHaveLength(6);
  } finally {
    for (const answer of answers.splice(0)) answer();
    await db.end();
  }
});
