// Delivery rules with an injected clock: only 2xx succeeds, the retry schedule with jitter, Retry-After, 410 disables
// the endpoint (and holds its deliveries), redirects are not followed, the timeout, replay with the same webhook-id,
// SSRF refusals, isolation between endpoints, and a claim whose worker died is sent by another.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { replayDelivery, setWebhook } from '../../src/admin/webhooks.js';
import { AdminError } from '../../src/admin/errors.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { RETRY_DELAYS_MS } from '../../src/webhooks/retry-schedule.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { match } from '../helpers/matchers.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceEndpoint, insertDeliveryRow } from '../helpers/seed.js';

interface Setup {
  app: App;
  clock: { now: Date };
  receiver: Receiver;
  secret: string;
  accountId: string;
  key: string;
}

async function setup(
  options: { allowPrivate?: boolean; timeoutMs?: number; perEndpoint?: number } = {},
): Promise<Setup> {
  const clock = { now: new Date('2054-12-01T10:00:00Z') };
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: String(options.allowPrivate ?? true) },
    jobs: {
      webhooks: {
        pollMs: 3_600_000,
        random: () => 0.5,
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.perEndpoint ? { perEndpoint: options.perEndpoint } : {}),
      },
    },
  });
  const tenant = await createTenant(app.storage);
  const receiver = await startReceiver();
  const { secret } = await setWebhook(app.storage, tenant.accountId, receiver.url, {
    allowPrivate: true,
    now: app.now(),
  });
  return { app, clock, receiver, secret, accountId: tenant.accountId, key: tenant.key };
}

/** A call.failed event (canceled before dialling): one pending delivery. */
async function event(s: Setup) {
  const call_id = callIdOf(await trigger(s.app, s.key));
  await applyCallUpdate(
    s.app.storage,
    call_id,
    { kind: 'failed', reason: 'canceled' },
    { now: s.clock.now, source: 'operator' },
  );
  return prismaOf(s.app).webhookDelivery.findFirstOrThrow({ where: { callId: call_id } });
}

const advance = (s: Setup, ms: number) => {
  s.clock.now = new Date(s.clock.now.getTime() + ms);
};
const reload = (s: Setup, id: string) =>
  prismaOf(s.app).webhookDelivery.findUniqueOrThrow({
    where: { id },
    include: { attempts: { orderBy: { attemptNumber: 'asc' } }, endpoint: true },
  });

describe('retries', () => {
  it('a failed attempt is retried about 5 s later with the same webhook-id and a fresh, valid signature', async () => {
    const s = await setup();
    s.receiver.respond = (_r, i) => ({ status: i === 0 ? 500 : 204 });
    const delivery = await event(s);
    await s.app.deliveryWorker!.settle();
    let d = await reload(s, delivery.id);
    expect(d).toMatchObject({ status: 'pending', attemptCount: 1 });
    expect(d.nextAttemptAt.getTime() - s.clock.now.getTime()).toBe(RETRY_DELAYS_MS[0]);

    advance(s, 4_000);
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(1);
    advance(s, 1_000);
    await s.app.deliveryWorker!.settle();
    const [first, second] = s.receiver.received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.headers['webhook-id']).toBe(delivery.id);
    expect(second!.headers['webhook-timestamp']).not.toBe(first!.headers['webhook-timestamp']);
    expect(second!.body).toBe(first!.body);
    // The injected clock is days ahead, so verify() would reject the timestamp as too new: check the signature itself.
    const signed = new Webhook(s.secret).sign(
      delivery.id,
      new Date(Number(second!.headers['webhook-timestamp']) * 1000),
      second!.body,
    );
    expect(second!.headers['webhook-signature']).toBe(signed);
    d = await reload(s, delivery.id);
    expect(d).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    expect(d.attempts.map((a) => a.responseStatus)).toEqual([500, 204]);
  });

  it('follows the whole schedule (jittered), fails after the last attempt, and stays replayable with the same id', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 500 });
    const delivery = await event(s);
    const gaps: number[] = [];
    await s.app.deliveryWorker!.settle();
    for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
      const d = await reload(s, delivery.id);
      gaps.push(d.nextAttemptAt.getTime() - s.clock.now.getTime());
      s.clock.now = d.nextAttemptAt;
      await s.app.deliveryWorker!.settle();
    }
    expect(gaps).toEqual([...RETRY_DELAYS_MS]); // random() = 0.5 puts the jitter at its midpoint
    let d = await reload(s, delivery.id);
    expect(d).toMatchObject({ status: 'failed', attemptCount: 10 });
    expect(d.attempts).toHaveLength(10);
    advance(s, 48 * 3600_000);
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(10);

    s.receiver.respond = () => ({ status: 200 });
    await replayDelivery(s.app.storage, delivery.id, undefined, { now: s.app.now() });
    await s.app.deliveryWorker!.settle();
    d = await reload(s, delivery.id);
    expect(d.status).toBe('succeeded');
    expect(d.attempts).toHaveLength(11);
    expect(s.receiver.received.at(-1)!.headers['webhook-id']).toBe(delivery.id);
  });

  it('jitter spreads retries within ±10%', async () => {
    const { nextAttemptDelay } = await import('../../src/webhooks/retry-schedule.js');
    expect(nextAttemptDelay(1, { random: () => 0 })).toBe(4_500);
    expect(nextAttemptDelay(1, { random: () => 1 })).toBe(5_500);
    expect(nextAttemptDelay(9, { random: () => 0.5 })).toBe(24 * 3600_000);
    expect(nextAttemptDelay(10)).toBeNull();
  });

  it('honours Retry-After on 429 and 503 when it asks for longer', async () => {
    const s = await setup();
    s.receiver.respond = (_r, i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after': '7200' } }
        : { status: 503, headers: { 'retry-after': new Date(Date.now() + 3600_000).toUTCString() } };
    const delivery = await event(s);
    await s.app.deliveryWorker!.settle();
    let d = await reload(s, delivery.id);
    expect(d.nextAttemptAt.getTime() - s.clock.now.getTime()).toBe(7_200_000);
    s.clock.now = d.nextAttemptAt;
    await s.app.deliveryWorker!.settle();
    d = await reload(s, delivery.id);
    expect(d.attempts.map((a) => a.responseStatus)).toEqual([429, 503]);
    expect(d.nextAttemptAt.getTime() - s.clock.now.getTime()).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[1]);
  });
});

describe('answers that are not success', () => {
  it('410 Gone: the endpoint is disabled, the delivery and later events are held (not sent), replay is refused', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 410 });
    const delivery = await event(s);
    await s.app.deliveryWorker!.settle();
    const d = await reload(s, delivery.id);
    expect(d).toMatchObject({
      status: 'held',
      completedAt: null,
      heldReason: match.stringMatching(/^endpoint disabled \(answered 410 Gone/),
    });
    expect(d.endpoint).toMatchObject({ enabled: false });
    expect(d.endpoint.disabledReason).toMatch(/410/);
    const later = await event(s);
    expect(later).toMatchObject({ status: 'held', heldReason: d.heldReason });
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(1);
    await expect(replayDelivery(s.app.storage, delivery.id, undefined, { now: s.app.now() })).rejects.toThrow(
      AdminError,
    );
  });

  it('a redirect is not followed: it counts as a failure and is retried', async () => {
    const s = await setup();
    const elsewhere = await startReceiver('/elsewhere');
    s.receiver.respond = () => ({ status: 302, headers: { location: elsewhere.url } });
    const delivery = await event(s);
    await s.app.deliveryWorker!.settle();
    expect(elsewhere.received).toHaveLength(0);
    expect(await reload(s, delivery.id)).toMatchObject({ status: 'pending', attempts: [{ responseStatus: 302 }] });
  });

  it('an answer slower than the timeout is abandoned and retried', async () => {
    const s = await setup({ timeoutMs: 300 });
    s.receiver.respond = () => 'hang';
    const delivery = await event(s);
    await s.app.deliveryWorker!.settle();
    const d = await reload(s, delivery.id);
    expect(d.status).toBe('pending');
    expect(d.attempts[0]!.error).toMatch(/timed out after 300 ms/);
    expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(290);
  });
});

describe('SSRF', () => {
  it('refuses http and private, loopback, link-local and metadata URLs up front unless private targets are allowed', async () => {
    const s = await setup({ allowPrivate: false });
    for (const url of [
      'http://example.com/hook',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/x',
      'https://169.254.169.254/latest',
      'https://[::1]/x',
      'https://100.64.0.1/x',
      'https://localhost/x',
      'https://user:pw@example.com/x',
    ]) {
      await expect(
        setWebhook(s.app.storage, s.accountId, url, { allowPrivate: false, now: s.app.now() }),
        url,
      ).rejects.toThrow(AdminError);
    }
    await expect(
      setWebhook(s.app.storage, s.accountId, 'https://hooks.example.com/x', { allowPrivate: false, now: s.app.now() }),
    ).resolves.toMatchObject({ secret: match.stringMatching(/^whsec_/) });
  });

  it('checks the address actually connected to, so a name that resolves to a private address is refused (DNS rebinding)', async () => {
    const s = await setup({ allowPrivate: false });
    const delivery = await event(s);
    // As if the name had resolved to a public address when it was set: 'localhost' resolves to 127.0.0.1 now.
    await forceEndpoint(
      prismaOf(s.app),
      { id: delivery.endpointId },
      { url: s.receiver.url.replace('127.0.0.1', 'localhost') },
    );
    await s.app.deliveryWorker!.settle();
    const d = await reload(s, delivery.id);
    expect(s.receiver.received).toHaveLength(0);
    expect(d.status).toBe('pending');
    expect(d.attempts[0]!.error).toMatch(/not allowed/i);
  });
});

describe('isolation and crashes', () => {
  it("a hanging endpoint does not delay another account's events", async () => {
    // The hanging attempts' timeout is far beyond the test: another account's event that waited for them would not
    // arrive in time however slow the machine, and no hanging attempt ends (and is followed by another) meanwhile.
    const s = await setup({ timeoutMs: 60_000, perEndpoint: 2 });
    s.receiver.respond = () => 'hang';
    for (let i = 0; i < 6; i++) await event(s);
    const other = await createTenant(s.app.storage);
    const fast = await startReceiver();
    await setWebhook(s.app.storage, other.accountId, fast.url, { allowPrivate: true, now: s.app.now() });
    s.app.deliveryWorker!.wake();
    await s.receiver.waitFor(2);
    const call_id = callIdOf(await trigger(s.app, other.key));
    await applyCallUpdate(
      s.app.storage,
      call_id,
      { kind: 'failed', reason: 'canceled' },
      { now: s.clock.now, source: 'operator' },
    );
    await fast.waitFor(1);
    // The hanging endpoint never had more than its share in flight, and still holds both.
    expect(s.receiver.received).toHaveLength(2);
    // Its connections dropped: the hanging attempts fail at once (their retries are not due on the test's clock).
    await s.receiver.stop();
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(2);
  });

  it('a delivery claimed by a worker that died is sent once its lease runs out', async () => {
    const s = await setup();
    // Written directly (no NOTIFY), already claimed by a worker that then died.
    const call_id = callIdOf(await trigger(s.app, s.key));
    const call = await prismaOf(s.app).call.findUniqueOrThrow({
      where: { id: call_id },
      include: { events: true, account: { include: { webhookEndpoint: true } } },
    });
    const delivery = await insertDeliveryRow(prismaOf(s.app), {
      endpointId: call.account.webhookEndpoint!.id,
      callId: call_id,
      callEventId: call.events[0]!.id,
      eventType: 'call.failed',
      payload: '{"type":"call.failed"}',
      nextAttemptAt: s.clock.now,
      leaseExpiresAt: new Date(s.clock.now.getTime() + 60_000),
    });
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(0);
    advance(s, 61_000);
    await s.app.deliveryWorker!.settle();
    expect(s.receiver.received).toHaveLength(1);
    expect(await reload(s, delivery.id)).toMatchObject({ status: 'succeeded', attemptCount: 1 });
  });
});

describe('settle (what tests that move the clock rely on)', () => {
  it('waits for the attempts of a pass woken while it waited, not only for those in flight when it began', async () => {
    const s = await setup();
    // The first delivery is answered only once the second has arrived; the second, 300 ms after it arrived.
    let secondArrived!: () => void;
    const second = new Promise<void>((resolve) => {
      secondArrived = resolve;
    });
    s.receiver.respond = async (_r, i) => {
      if (i === 0) {
        await second;
        return { status: 204 };
      }
      secondArrived();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { status: 204 };
    };
    const first = await event(s);
    const settling = s.app.deliveryWorker!.settle();
    await s.receiver.waitFor(1);
    // Written while settle() waits for the first: its NOTIFY (and this wake) start a pass that sends it.
    const later = await event(s);
    s.app.deliveryWorker!.wake();
    await settling;
    expect(s.receiver.received).toHaveLength(2);
    expect(await reload(s, first.id)).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(await reload(s, later.id)).toMatchObject({ status: 'succeeded', attemptCount: 1 });
  });
});
