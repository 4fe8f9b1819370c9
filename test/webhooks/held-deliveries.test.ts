// Events that happen while the account's endpoint is disabled are held, not dropped, and sent once it is enabled again
// (issue 21.2): after a 410, while retrying, when claimed for an endpoint switched off meanwhile, and racing an
// "Enable again"; a URL change sends pending deliveries to the new URL and does not enable the endpoint; an account
// without an endpoint records nothing; retention keeps held deliveries. Real database, real receivers, injected clock.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { enableWebhook, setWebhook } from '../../src/admin/webhooks.js';
import { applyCallUpdate, planCallBatch } from '../../src/calls/transition.js';
import type { Call } from '../../src/generated/prisma/client.js';
import { CALL_COLUMNS, writeCallBatch } from '../../src/storage/calls.js';
import { sqlPool } from '../../src/storage/database.js';
import { deleteBatch, RETENTION_STEPS } from '../../src/storage/retention.js';
import type { WebhookEvent } from '../../schemas/webhook.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { match } from '../helpers/matchers.js';
import { waitFor } from '../helpers/wait.js';
import {
  forceDeliveries,
  forceEndpoint,
  insertDeliveryRow,
  deleteEndpoint,
  lockWaiters,
  whileHolding,
} from '../helpers/seed.js';

interface Setup {
  app: App;
  databaseUrl: string;
  clock: { now: Date };
  receiver: Receiver;
  secret: string;
  tenant: Tenant;
}

async function setup(): Promise<Setup> {
  const clock = { now: new Date('2054-12-01T10:00:00Z') };
  const { app, databaseUrl } = await buildTestApp({
    clock: () => clock.now,
    env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  });
  const tenant = await createTenant(app.storage);
  const receiver = await startReceiver();
  const { secret } = await setWebhook(app.storage, tenant.accountId, receiver.url, {
    allowPrivate: true,
    now: app.now(),
  });
  return { app, databaseUrl, clock, receiver, secret, tenant };
}

const context = (s: Setup) => ({ now: s.clock.now, source: 'provider' });
const advance = (s: Setup, ms: number) => {
  s.clock.now = new Date(s.clock.now.getTime() + ms);
};
const settle = (s: Setup) => s.app.deliveryWorker!.settle();

/** A call dialled: its call.started delivery is written. */
async function dialledCall(s: Setup): Promise<string> {
  const callId = callIdOf(await trigger(s.app, s.tenant.key));
  await applyCallUpdate(s.app.storage, callId, { kind: 'dialing' }, context(s));
  return callId;
}

async function complete(s: Setup, callId: string) {
  await applyCallUpdate(s.app.storage, callId, { kind: 'answered' }, context(s));
  await applyCallUpdate(s.app.storage, callId, { kind: 'completed', durationSeconds: 42 }, context(s));
}

/** A call canceled before dialling: one call.failed delivery. */
async function canceledCall(s: Setup): Promise<string> {
  const callId = callIdOf(await trigger(s.app, s.tenant.key));
  await applyCallUpdate(s.app.storage, callId, { kind: 'failed', reason: 'canceled' }, context(s));
  return callId;
}

const deliveriesOf = (s: Setup, callId: string) =>
  prismaOf(s.app).webhookDelivery.findMany({
    where: { callId },
    orderBy: { createdAt: 'asc' },
    include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
  });
const endpointOf = (s: Setup) =>
  prismaOf(s.app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: s.tenant.accountId } });

/**
 * Whether `received` is signed with `secret` (the signature itself: the injected clock is days ahead, so verify()
 * would reject the timestamp as too new).
 */
function signedWith(secret: string, received: Receiver['received'][number]): boolean {
  const id = received.headers['webhook-id'] as string;
  const signed = new Webhook(secret).sign(
    id,
    new Date(Number(received.headers['webhook-timestamp']) * 1000),
    received.body,
  );
  return received.headers['webhook-signature'] === signed;
}

/** What a receiver got: event type, call id and webhook-id of each request, in order. */
const got = (receiver: Receiver) =>
  receiver.received.map((r) => {
    const event = JSON.parse(r.body) as WebhookEvent;
    return { type: event.type, callId: event.data.call_id, id: r.headers['webhook-id'] };
  });

describe('an endpoint disabled by a 410', () => {
  it('holds the call.completed that follows, shows it in callctl webhook show, and callctl webhook enable sends it once', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 410 });
    const callId = await dialledCall(s);
    await settle(s);
    expect((await endpointOf(s)).enabled).toBe(false);
    await complete(s, callId);

    const [started, completed] = await deliveriesOf(s, callId);
    // The one answered 410 did not reach anyone: held too, its attempt on record.
    expect(started).toMatchObject({
      eventType: 'call.started',
      status: 'held',
      heldReason: match.stringMatching(/^endpoint disabled \(answered 410 Gone at /),
    });
    expect(started!.attempts.map((a) => a.responseStatus)).toEqual([410]);
    expect(completed).toMatchObject({
      eventType: 'call.completed',
      status: 'held',
      heldReason: match.stringMatching(/^endpoint disabled \(answered 410 Gone at /),
      attempts: [],
    });

    // Never sent while the endpoint stays disabled, however long.
    s.receiver.respond = () => ({ status: 200 });
    advance(s, 3 * 24 * 3600_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(s.receiver.received).toHaveLength(1);

    const shown = (
      await callctl(s.databaseUrl, ['webhook', 'show', s.tenant.accountId, '--json'], {}, s.app.now)
    ).json();
    expect(shown).toEqual({
      webhook: {
        url: s.receiver.url,
        enabled: false,
        disabled_reason: match.stringMatching(/410 Gone/),
        pending: 0,
        held: 2,
        held_since: started!.createdAt.toISOString(),
        failed: 0,
      },
    });
    const human = await callctl(s.databaseUrl, ['webhook', 'show', s.tenant.accountId], {}, s.app.now);
    expect(human.stdout).toContain(
      `callctl webhook enable ${s.tenant.accountId}, which sends the 2 events held since ${started!.createdAt.toISOString()}`,
    );

    const enabled = await callctl(s.databaseUrl, ['webhook', 'enable', s.tenant.accountId, '--json'], {}, s.app.now);
    expect(enabled.code).toBe(0);
    expect(enabled.json()).toMatchObject({ enabled: true, released: 2, changed_at: match.any(String) });
    await settle(s);
    expect(got(s.receiver).slice(1)).toEqual([
      { type: 'call.started', callId, id: started!.id },
      { type: 'call.completed', callId, id: completed!.id },
    ]);
    for (const r of s.receiver.received) expect(signedWith(s.secret, r)).toBe(true);
    expect((await deliveriesOf(s, callId)).map((d) => [d.status, d.heldReason])).toEqual([
      ['succeeded', null],
      ['succeeded', null],
    ]);

    // Exactly once: nothing more, however long.
    advance(s, 3 * 24 * 3600_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(s.receiver.received).toHaveLength(3);
    expect(
      (await callctl(s.databaseUrl, ['webhook', 'show', s.tenant.accountId, '--json'], {}, s.app.now)).json(),
    ).toMatchObject({
      webhook: { enabled: true, held: 0, held_since: null },
    });
  });

  it('holds the deliveries that were retrying when it was switched off, and sends them once enabled again (src/admin)', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 500 });
    const retrying = await canceledCall(s);
    await settle(s);
    expect((await deliveriesOf(s, retrying))[0]).toMatchObject({ status: 'pending', attemptCount: 1 });

    // Another event is answered 410 before the first one's retry is due.
    s.receiver.respond = () => ({ status: 410 });
    const gone = await canceledCall(s);
    await settle(s);
    expect((await deliveriesOf(s, retrying))[0]).toMatchObject({
      status: 'held',
      heldReason: match.stringMatching(/answered 410 Gone/),
    });
    expect((await deliveriesOf(s, gone))[0]).toMatchObject({ status: 'held' });

    s.receiver.respond = () => ({ status: 204 });
    advance(s, 24 * 3600_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(s.receiver.received).toHaveLength(2);

    const result = await enableWebhook(s.app.storage, s.tenant.accountId, { kind: 'operator' }, s.clock.now);
    expect(result).toMatchObject({ released: 2, changed_at: s.clock.now.toISOString() });
    await settle(s);
    const sent = got(s.receiver).slice(2);
    expect(sent.map((e) => e.callId).sort()).toEqual([retrying, gone].sort());
    expect(new Set(sent.map((e) => e.id)).size).toBe(2);
    const audited = await prismaOf(s.app).auditEntry.findMany({
      where: { accountId: s.tenant.accountId, action: 'webhook_enabled' },
    });
    expect(audited.map((e) => e.detail)).toEqual([expect.objectContaining({ released: 2 })]);
  });

  it('a delivery claimed for an endpoint switched off meanwhile is held, unsent (not failed)', async () => {
    const s = await setup();
    // Written pending (directly: no NOTIFY) before the endpoint was switched off, as a transition racing the 410
    // leaves it.
    const callId = callIdOf(await trigger(s.app, s.tenant.key));
    const call = await prismaOf(s.app).call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } });
    await insertDeliveryRow(prismaOf(s.app), {
      endpointId: (await endpointOf(s)).id,
      callId,
      callEventId: call.events[0]!.id,
      eventType: 'call.failed',
      payload: '{"type":"call.failed","data":{"call_id":"' + callId + '"}}',
      nextAttemptAt: new Date(s.clock.now.getTime() + 60_000),
    });
    await forceEndpoint(
      prismaOf(s.app),
      { accountId: s.tenant.accountId },
      { enabled: false, disabledReason: 'answered 410 Gone at then' },
    );
    advance(s, 61_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(s.receiver.received).toHaveLength(0);
    expect((await deliveriesOf(s, callId))[0]).toMatchObject({
      status: 'held',
      heldReason: 'endpoint disabled (answered 410 Gone at then)',
      completedAt: null,
      leaseExpiresAt: null,
    });
    await enableWebhook(s.app.storage, s.tenant.accountId, undefined, s.app.now());
    await settle(s);
    expect(got(s.receiver)).toEqual([{ type: 'call.failed', callId, id: match.any(String) }]);
  });
});

describe('enabling again while a transition writes held deliveries', () => {
  it('waits for the transition: what it held is released, not left behind', async () => {
    const s = await setup();
    await forceEndpoint(
      prismaOf(s.app),
      { accountId: s.tenant.accountId },
      { enabled: false, disabledReason: 'switched off by a test' },
    );
    const callId = callIdOf(await trigger(s.app, s.tenant.key));
    const pool = sqlPool(prismaOf(s.app));
    const { enabling } = await whileHolding(pool, async (client) => {
      const { rows } = await client.query<Call>({
        text: `SELECT ${CALL_COLUMNS} FROM calls c WHERE c.id = ANY($1::uuid[]) FOR UPDATE`,
        values: [[callId]],
      });
      const { batch } = planCallBatch(
        [{ call: rows[0]!, change: { update: { kind: 'failed', reason: 'canceled' } } }],
        context(s),
      );
      await writeCallBatch(client, batch!, s.app.storage.secrets);
      // The held delivery is written, not committed: "Enable again" now must wait for this transaction.
      const enabling = enableWebhook(s.app.storage, s.tenant.accountId, undefined, s.app.now());
      await waitFor(
        () => lockWaiters(pool),
        (n) => n > 0,
      ).catch(() => undefined);
      return { enabling };
    });
    expect(await enabling).toMatchObject({ released: 1 });
    // Released: due again (or already sent by the worker the release woke), never left held.
    const [released] = await deliveriesOf(s, callId);
    expect(released!.heldReason).toBeNull();
    expect(['pending', 'succeeded']).toContain(released!.status);
    await settle(s);
    expect(got(s.receiver)).toEqual([{ type: 'call.failed', callId, id: match.any(String) }]);
  });
});

describe('the endpoint URL changed', () => {
  it('pending deliveries go to the new URL, signed with the new secret, same webhook-id; a disabled endpoint stays disabled', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 503 });
    const callId = await canceledCall(s);
    await settle(s);
    const [pending] = await deliveriesOf(s, callId);
    expect(pending).toMatchObject({ status: 'pending', attemptCount: 1 });

    const moved = await startReceiver();
    const { secret, enabled } = await setWebhook(s.app.storage, s.tenant.accountId, moved.url, {
      allowPrivate: true,
      now: s.app.now(),
    });
    expect(enabled).toBe(true);
    advance(s, 60_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(s.receiver.received).toHaveLength(1);
    expect(got(moved)).toEqual([{ type: 'call.failed', callId, id: pending!.id }]);
    expect(signedWith(secret, moved.received[0]!)).toBe(true);
    expect(signedWith(s.secret, moved.received[0]!)).toBe(false);

    // Disabled by a 410, then moved again: still disabled, its held deliveries wait for "Enable again".
    moved.respond = () => ({ status: 410 });
    const gone = await canceledCall(s);
    await settle(s);
    const third = await startReceiver();
    const changed = await setWebhook(s.app.storage, s.tenant.accountId, third.url, {
      allowPrivate: true,
      now: s.app.now(),
    });
    expect(changed.enabled).toBe(false);
    const later = await canceledCall(s);
    advance(s, 24 * 3600_000);
    s.app.deliveryWorker!.wake();
    await settle(s);
    expect(third.received).toHaveLength(0);
    expect((await endpointOf(s)).enabled).toBe(false);
    const set = await callctl(
      s.databaseUrl,
      ['webhook', 'set', s.tenant.accountId, '--url', third.url],
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      },
      s.app.now,
    );
    expect(set.stdout).toContain(
      `The endpoint stays disabled: once the receiver uses this secret, callctl webhook enable ${s.tenant.accountId} sends the events held meanwhile.`,
    );
    const newest = /whsec_[A-Za-z0-9+/=]+/.exec(set.stdout)![0];

    await enableWebhook(s.app.storage, s.tenant.accountId, undefined, s.app.now());
    await settle(s);
    expect(
      got(third)
        .map((e) => e.callId)
        .sort(),
    ).toEqual([gone, later].sort());
    for (const r of third.received) expect(signedWith(newest, r)).toBe(true);
  });
});

describe('no endpoint set', () => {
  it('records nothing for events that happen before one is set (nothing is sent later either)', async () => {
    const s = await setup();
    await deleteEndpoint(prismaOf(s.app), s.tenant.accountId);
    const callId = await canceledCall(s);
    expect(await deliveriesOf(s, callId)).toEqual([]);
    await setWebhook(s.app.storage, s.tenant.accountId, s.receiver.url, { allowPrivate: true, now: s.app.now() });
    await settle(s);
    expect(s.receiver.received).toHaveLength(0);
  });
});

describe('retention', () => {
  it('keeps held deliveries and their calls, however old', async () => {
    const s = await setup();
    s.receiver.respond = () => ({ status: 410 });
    const callId = await canceledCall(s);
    await settle(s);
    expect((await deliveriesOf(s, callId))[0]).toMatchObject({ status: 'held' });
    // As if the retention periods had long passed; a succeeded delivery of that age would go.
    await forceDeliveries(prismaOf(s.app), { callId }, { completedAt: new Date('2048-01-01T00:00:00Z') });
    const future = new Date('2058-01-01T00:00:00Z');
    const cutoffs = {
      now: future,
      sessionsIdleSince: future,
      deliveriesBefore: future,
      callsBefore: future,
      auditBefore: new Date(0),
    };
    for (const step of RETENTION_STEPS.filter((r) => r.table === 'webhook_deliveries' || r.table === 'calls')) {
      await deleteBatch(sqlPool(prismaOf(s.app)), step, cutoffs, 100);
    }
    expect(await deliveriesOf(s, callId)).toHaveLength(1);
    expect(await prismaOf(s.app).call.count({ where: { id: callId } })).toBe(1);
  });
});
