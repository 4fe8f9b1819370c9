// The rows that grow with every call get time-ordered ids (UUIDv7, src/domain/ids.ts), so that rows written together
// sit together in the primary keys and the indexes led by a call's id (docs/performance.md#time-ordered-row-ids).
import { beforeAll, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix time in milliseconds a v7 id carries in its first 48 bits. */
const millisOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

let app: App;
let receiver: Receiver;

beforeAll(async () => {
  ({ app } = await buildTestApp({
    env: {
      DISPATCH_ENABLED: 'true',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SIMULATED_RING_MS: '10',
      SIMULATED_TALK_MS: '20',
    },
  }));
  receiver = await startReceiver();
});

it('a call, its events, its webhook deliveries and their attempts get UUIDv7 ids of when they were written, in order', async () => {
  const tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
  const before = Date.now();
  const callIds: string[] = [];
  for (let i = 0; i < 5; i++) callIds.push(callIdOf(await trigger(app, tenant.key)));
  const after = Date.now();

  // Issued in order, each carrying the moment of its acceptance.
  expect(callIds.every((id) => V7.test(id))).toBe(true);
  expect([...callIds].sort()).toEqual(callIds);
  for (const id of callIds) {
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
  }

  // Every call ends with its two deliveries (call.started and call.completed) sent once each.
  const where = { callId: { in: callIds } };
  await waitFor(
    () => prismaOf(app).webhookDelivery.count({ where: { ...where, status: 'succeeded' } }),
    (n) => n === 2 * callIds.length,
  );
  const events = await prismaOf(app).callEvent.findMany({ where, orderBy: { occurredAt: 'asc' } });
  const deliveries = await prismaOf(app).webhookDelivery.findMany({ where, include: { attempts: true } });
  const attempts = deliveries.flatMap((d) => d.attempts);
  expect(events).toHaveLength(4 * callIds.length);
  expect(attempts).toHaveLength(2 * callIds.length);
  for (const { id } of [...events, ...deliveries, ...attempts]) expect(id).toMatch(V7);
  // Each carries (to the millisecond) when it was written: an event no earlier than its call's acceptance.
  for (const event of events) expect(millisOf(event.id)).toBeGreaterThanOrEqual(millisOf(event.callId));
  for (const attempt of attempts)
    expect(Math.abs(millisOf(attempt.id) - attempt.startedAt.getTime())).toBeLessThan(5_000);
});
