// Endpoints that time out do not hold back everyone else's webhooks (issue 16.5): an attempt unanswered after a
// second no longer takes one of the worker's places in flight; nor do they hold a stopping process past its grace.
import { describe, expect, it, onTestFinished } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

/** A call of `tenant` triggered and then ended by an operator: its webhook events are queued at once. */
async function endedCall(app: App, tenant: { key: string }) {
  const callId = callIdOf(await trigger(app, tenant.key));
  await applyCallUpdate(
    app.storage,
    callId,
    { kind: 'failed', reason: 'canceled' },
    { now: new Date(), source: 'operator' },
  );
  return callId;
}

describe('stalled endpoints', () => {
  it('with every place in flight held by an endpoint that never answers, another endpoint still gets its webhook within seconds', async () => {
    const { app } = await buildTestApp({
      env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
      jobs: { webhooks: { pollMs: 3_600_000, maxInFlight: 2, perEndpoint: 2, timeoutMs: 20_000 } },
    });
    const hanging = await startReceiver();
    hanging.respond = () => 'hang';
    const healthy = await startReceiver();
    const slow = await createTenant(app.storage);
    const other = await createTenant(app.storage);
    await setWebhook(app.storage, slow.accountId, hanging.url, { allowPrivate: true, now: app.now() });
    await setWebhook(app.storage, other.accountId, healthy.url, { allowPrivate: true, now: app.now() });
    await endedCall(app, slow);
    await endedCall(app, slow);
    await endedCall(app, slow);
    await hanging.waitFor(2);
    const started = Date.now();
    const callId = await endedCall(app, other);
    const [received] = await healthy.waitFor(1, 10_000);
    expect(json<WebhookEvent>(received!.body).data.call_id).toBe(callId);
    // Within the second after which the hanging attempts stop counting, not after their 20 s timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
    // The hanging endpoint still has its cap of 2 in flight, never a third.
    expect(hanging.received).toHaveLength(2);
    // The app closes after the test once its attempts end: dropped now, they need not wait for their 20 s timeout.
    await hanging.stop();
  });

  it('a worker that stops with an attempt unanswered gives it back unrecorded, and the next worker sends it at once', async () => {
    const { app, databaseUrl } = await buildTestApp({
      env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
      jobs: { webhooks: { pollMs: 3_600_000, timeoutMs: 60_000, stopWaitMs: 300 } },
    });
    const receiver = await startReceiver();
    onTestFinished(() => receiver.stop());
    receiver.respond = (_, index) => (index === 0 ? 'hang' : { status: 204 });
    const tenant = await createTenant(app.storage);
    await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
    const callId = await endedCall(app, tenant);
    const [first] = await receiver.waitFor(1);

    // Its endpoint would hold the attempt for a minute (the whole shutdown grace, and more): the stop does not wait.
    await app.deliveryWorker!.stop();
    expect(receiver.received).toHaveLength(1);
    const [delivery] = await prismaOf(app).webhookDelivery.findMany({ where: { callId } });
    expect(delivery).toMatchObject({ status: 'pending', attemptCount: 0, leaseExpiresAt: null });
    expect(await prismaOf(app).webhookAttempt.count({ where: { deliveryId: delivery!.id } })).toBe(0);

    // Another replica's worker (no poll for an hour: its first pass at start claims what is due).
    const next = new DeliveryWorker({
      storage: app.backgroundStorage,
      databaseUrl,
      sender: new WebhookSender({ allowPrivateTargets: true }),
      now: () => new Date(),
      log: app.log,
      leaseMs: 45_000,
      pollMs: 3_600_000,
    });
    onTestFinished(() => next.stop());
    await next.start();
    const [, again] = await receiver.waitFor(2, 10_000);
    expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    await next.settle();
    expect(await prismaOf(app).webhookDelivery.findUniqueOrThrow({ where: { id: delivery!.id } })).toMatchObject({
      status: 'succeeded',
      attemptCount: 1,
    });
    expect(await prismaOf(app).webhookAttempt.count({ where: { deliveryId: delivery!.id } })).toBe(1);
  });
});
