// The webhook workers' claim (src/storage/deliveries.ts) with two workers at once: the second never waits for the
// first's commit; it leases what the first has not locked.
import pg from 'pg';
import { expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

it('a claim passes over the deliveries another claim has locked instead of waiting for its commit', async () => {
  // Calls are dialled (their call.started deliveries written) but no worker sends them; nobody hangs up for a minute.
  const { app, databaseUrl } = await buildTestApp({
    env: {
      DISPATCH_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SIMULATED_RING_MS: '0',
      SIMULATED_TALK_MS: '60000',
    },
  });
  const tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, (await startReceiver()).url, { allowPrivate: true, now: app.now() });
  for (let i = 0; i < 3; i++) expect((await trigger(app, tenant.key)).statusCode).toBe(200);
  const pending = await waitFor(
    () => prismaOf(app).webhookDelivery.findMany({ where: { status: 'pending' }, orderBy: { createdAt: 'asc' } }),
    (ds) => ds.length === 3,
  );

  // Another worker's claim, between its claiming update and its commit: the first delivery's row is locked.
  const other = new pg.Client({ connectionString: databaseUrl });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [pending[0]!.id]);
    const now = new Date();
    const claim = app.storage.deliveries.claimDueDeliveries({
      now,
      inFlight: new Map(),
      perEndpoint: 10,
      limit: 100,
      leaseUntil: new Date(now.getTime() + 60_000),
    });
    const waited = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5_000).unref());
    const claimed = await Promise.race([claim, waited]);
    expect(claimed).not.toBe('waited');
    expect((claimed as { id: string }[]).map((d) => d.id).sort()).toEqual([pending[1]!.id, pending[2]!.id].sort());
  } finally {
    await other.query('ROLLBACK');
    await other.end();
  }
});
