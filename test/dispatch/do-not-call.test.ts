// The do-not-call check before every attempt: a call accepted while its number was not listed, and listed before the
// dispatcher claims it (on the list of its account or of its agency) by a path that ends no call (a row written in the
// moment the call was accepted), ends failed with failure_reason do_not_call in the claim's transaction: never
// dialled, no call.started, one call.failed; the calls beside and behind it are dialled as usual, even with one slot.
// Adding a number (dashboard, callctl, import) ends its waiting calls at once, whatever they wait for (the window,
// the next attempt): failed, do_not_call, one call.failed each, not when each would next be due; a call an agency's
// key placed on a client's agent (the agency's, listed for the client) ends when the client's list gets its number.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { importDoNotCall } from '../../src/admin/do-not-call-import.js';
import { createUser } from '../../src/admin/users.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { SIMULATED_BUSY_THEN_ANSWERS } from '../../src/dispatch/simulated-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, updateAgentSettings } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { insertDoNotCallEntry } from '../helpers/seed.js';

const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120' };
/** FAST, with webhooks delivered to a receiver on this machine. */
const DELIVERING = { ...FAST, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
/** Friday 18:30 in New York: the office-hours window is closed, so accepted calls wait. */
const FRIDAY_EVENING = new Date('2054-11-27T23:30:00Z');
/** Monday 09:00 in New York: it opens. */
const MONDAY_MORNING = new Date('2054-11-30T14:00:00Z');

function dialLog(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-dnc-dials-')), 'dials.log');
}
/** A number on a list by a write that ends no call: only the claim's check can catch its waiting calls. */
async function listedQuietly(app: Awaited<ReturnType<typeof buildTestApp>>['app'], accountId: string, phone: string) {
  await insertDoNotCallEntry(prismaOf(app), { data: { accountId, phoneNumber: phone, addedBy: 'operator' } });
}
/** The webhook events a receiver got. */
const eventsOf = (received: { body: string }[]) =>
  received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
/** The events received (or, for call ids, those expected: a call.failed each), as [type, call, reason], sorted. */
const failures = (of: { body: string }[] | string[]) =>
  (typeof of[0] === 'string'
    ? (of as string[]).map((id) => ['call.failed', id, 'do_not_call'])
    : eventsOf(of as { body: string }[]).map((e) => [e.type, e.data.call_id, e.data.failure_reason])
  ).sort();
const dialled = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

async function officeHoursAgent(app: Awaited<ReturnType<typeof buildTestApp>>['app'], accountId: string) {
  const { id } = await createAgent(app.storage, {
    accountId,
    name: 'office hours',
    phone: '+14155550111',
    timezone: 'America/New_York',
    windows: ['mon-fri 09:00-17:00'],
    outsideWindow: 'queue',
    now: app.now(),
  });
  return id;
}

/** An app whose dispatcher dials (into a log) and delivers webhooks, with an agency and a client of it. */
async function agencyAndClient(clock: () => Date) {
  const log = dialLog();
  const { app } = await buildTestApp({ clock, env: { ...DELIVERING, SIMULATED_DIAL_LOG: log } });
  const agency = await createTenant(app.storage);
  const client = await createClientTenant(app.storage, agency.accountId);
  return { app, log, agency, client };
}

/** The calls ended failed (do_not_call) on Friday evening by an operator's addition, before any dial. */
async function expectEndedNow(app: Awaited<ReturnType<typeof buildTestApp>>['app'], ids: string[]) {
  for (const id of ids) {
    const ended = await prismaOf(app).call.findUniqueOrThrow({ where: { id }, include: { events: true } });
    // Dated by the app's clock, the row's updated_at too.
    expect(ended).toMatchObject({
      status: 'failed',
      failureReason: 'do_not_call',
      endedAt: FRIDAY_EVENING,
      updatedAt: FRIDAY_EVENING,
    });
    expect(ended.events.map((e) => [e.toStatus, e.failureReason, e.source])).toEqual([
      ['initiated', null, 'api'],
      ['failed', 'do_not_call', 'operator'],
    ]);
  }
}

describe('the do-not-call check at the claim', () => {
  it("fails a waiting call whose number was listed (its account's or its agency's list) instead of dialling it", async () => {
    let now = FRIDAY_EVENING;
    const { app, log, agency, client } = await agencyAndClient(() => now);
    const receiver = await startReceiver();
    await setWebhook(app.storage, client.accountId, receiver.url, { allowPrivate: true, now: app.now() });
    const agentId = await officeHoursAgent(app, client.accountId);
    const call = async (phone: string) =>
      callIdOf(await trigger(app, client.key, { phone_number: phone, agent_id: agentId }));
    const onClientList = await call('+14155550201');
    const onAgencyList = await call('+14155550202');
    const free = await call('+14155550203');
    await app.dispatcher!.settle();
    expect(await prismaOf(app).call.count({ where: { accountId: client.accountId, status: 'initiated' } })).toBe(3);

    // Listed after acceptance, while the calls wait for the window.
    await listedQuietly(app, client.accountId, '+14155550201');
    await listedQuietly(app, agency.accountId, '+14155550202');
    now = MONDAY_MORNING;
    await app.dispatcher!.settle();

    for (const id of [onClientList, onAgencyList]) {
      const ended = await prismaOf(app).call.findUniqueOrThrow({ where: { id }, include: { events: true } });
      expect(ended).toMatchObject({
        status: 'failed',
        failureReason: 'do_not_call',
        startedAt: null,
        dialAttempts: 0,
        endedAt: MONDAY_MORNING,
      });
      expect(ended.events.map((e) => [e.toStatus, e.failureReason, e.source])).toEqual([
        ['initiated', null, 'api'],
        ['failed', 'do_not_call', 'dispatcher'],
      ]);
    }
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: free } })).startedAt).toEqual(MONDAY_MORNING);
    expect(dialled(log)).toEqual([free]);
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: client.accountId } })).waitingCalls).toBe(0);

    // One call.failed each, with the reason, and no call.started for them; the free call's start is sent too.
    const received = await receiver.waitFor(3);
    const events = eventsOf(received);
    for (const id of [onClientList, onAgencyList]) {
      const mine = events.filter((e) => e.data.call_id === id);
      expect(mine.map((e) => e.type)).toEqual(['call.failed']);
      expect(mine[0]!.data).toMatchObject({ status: 'failed', failure_reason: 'do_not_call', started_at: null });
    }
    expect(events.filter((e) => e.data.call_id === free).map((e) => e.type)).toContain('call.started');
  });

  it('a listed call does not hold the slot: with one slot, the call behind it is dialled in the same pass', async () => {
    let now = FRIDAY_EVENING;
    const log = dialLog();
    const { app } = await buildTestApp({
      clock: () => now,
      env: { ...FAST, MAX_CONCURRENT_CALLS: '1', SIMULATED_DIAL_LOG: log, SIMULATED_TALK_MS: '60000' },
    });
    const tenant = await createTenant(app.storage);
    const agentId = await officeHoursAgent(app, tenant.accountId);
    const first = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155550211', agent_id: agentId }));
    const second = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155550212', agent_id: agentId }));
    await app.dispatcher!.settle();
    await listedQuietly(app, tenant.accountId, '+14155550211');
    now = MONDAY_MORNING;
    await app.dispatcher!.settle();
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: first } })).toMatchObject({
      status: 'failed',
      failureReason: 'do_not_call',
    });
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: second } })).status).not.toBe('initiated');
    expect(dialled(log)).toEqual([second]);
  });

  it('a number listed while its call waits between attempts ends the call then, not at the next attempt', async () => {
    const RING_MS = 30;
    const T0 = new Date('2054-11-25T10:00:00.000Z');
    let now = T0;
    const log = dialLog();
    const { app } = await buildTestApp({
      clock: () => now,
      env: { ...FAST, SIMULATED_RING_MS: String(RING_MS), SIMULATED_DIAL_LOG: log },
    });
    const at = async (time: Date) => {
      now = time;
      await app.dispatcher!.settle();
    };
    const tenant = await createTenant(app.storage);
    await setWebhook(app.storage, tenant.accountId, 'https://hooks.example.com/calls', {
      allowPrivate: false,
      now: app.now(),
    });
    await updateAgentSettings(app.storage, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaits: [30] });
    // Busy on its first attempt; a second attempt, if dialled, would be answered.
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
    await at(T0);
    const ended1 = new Date(T0.getTime() + RING_MS);
    const next = new Date(ended1.getTime() + 30 * 60_000);
    await at(ended1);
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      status: 'initiated',
      attempt: 2,
      nextAttemptAt: next,
      dialAttempts: 1,
    });

    // Listed from the dashboard (a user of the account) ten minutes before the second attempt is due.
    const user = await createUser(app.storage, {
      accountId: tenant.accountId,
      email: 'ops@example.com',
      actor: OPERATOR,
      now: app.now(),
    });
    const listedAt = new Date(next.getTime() - 10 * 60_000);
    await at(listedAt);
    await addToDoNotCall(app.storage, {
      accountId: tenant.accountId,
      phoneNumber: SIMULATED_BUSY_THEN_ANSWERS,
      reason: 'asked on the first call',
      actor: { kind: 'user', userId: user.id, ip: null, scope: { accountId: tenant.accountId, kind: 'agency' } },
      now: listedAt,
    });
    // Ended by the add itself, before its next attempt was due.
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).status).toBe('failed');
    await at(next);

    const ended = await prismaOf(app).call.findUniqueOrThrow({
      where: { id: callId },
      include: { events: { orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] } },
    });
    expect(ended).toMatchObject({
      status: 'failed',
      failureReason: 'do_not_call',
      attempt: 2,
      dialAttempts: 1,
      nextAttemptAt: null,
      endedAt: listedAt,
      attemptOutcomes: [{ attempt: 1, outcome: 'busy', at: ended1.toISOString() }],
    });
    expect(ended.events.map((e) => [e.toStatus, e.failureReason, e.source])).toEqual([
      ['initiated', null, 'api'],
      ['dialing', null, 'dispatcher'],
      ['initiated', 'busy', expect.any(String)],
      ['failed', 'do_not_call', 'dashboard'],
    ]);
    expect(dialled(log)).toEqual([callId]);
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).waitingCalls).toBe(0);

    // The first attempt's call.started, and exactly one terminal event, after the check: it names the attempt last
    // dialled (1), not the one that was never made.
    const deliveries = await prismaOf(app).webhookDelivery.findMany({
      where: { callId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const events = deliveries.map((d) => json<WebhookEvent>(d.payload));
    expect(events.map((e) => [e.type, e.data.attempt])).toEqual([
      ['call.started', 1],
      ['call.failed', 1],
    ]);
    expect(events[1]!.data).toMatchObject({
      status: 'failed',
      failure_reason: 'do_not_call',
      attempts: 1,
      attempt_outcomes: [{ attempt: 1, outcome: 'busy', at: ended1.toISOString() }],
    });

    // Later passes change nothing.
    await at(new Date(next.getTime() + 60 * 60_000));
    expect(dialled(log)).toEqual([callId]);
    expect(await prismaOf(app).webhookDelivery.count({ where: { callId } })).toBe(2);
  });

  it("adding a number ends its waiting calls at once on the lists' accounts: an agency's covers its clients", async () => {
    const now = FRIDAY_EVENING;
    const { app, log, agency, client } = await agencyAndClient(() => now);
    const other = await createTenant(app.storage);
    const receiver = await startReceiver();
    await setWebhook(app.storage, client.accountId, receiver.url, { now: app.now(), allowPrivate: true });
    const agentId = await officeHoursAgent(app, client.accountId);
    const otherAgent = await officeHoursAgent(app, other.accountId);
    const call = async (phone: string) =>
      callIdOf(await trigger(app, client.key, { phone_number: phone, agent_id: agentId }));
    const [a, b, free] = [await call('+14155550221'), await call('+14155550222'), await call('+14155550223')];
    const otherTenant = callIdOf(await trigger(app, other.key, { phone_number: '+14155550221', agent_id: otherAgent }));
    await app.dispatcher!.settle();

    const added = await addToDoNotCall(app.storage, {
      accountId: agency.accountId,
      phoneNumber: '+14155550221',
      actor: OPERATOR,
      now,
    });
    expect(added.waiting_calls_ended).toBe(1);
    await addToDoNotCall(app.storage, {
      accountId: client.accountId,
      phoneNumber: '+1 415 555 0222',
      actor: OPERATOR,
      now,
    });

    // Ended now, on Friday evening, not on Monday morning when the window opens.
    await expectEndedNow(app, [a, b]);
    // Another tenant's call to the same number is no business of these lists.
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: otherTenant } })).status).toBe('initiated');
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: free } })).status).toBe('initiated');
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: client.accountId } })).waitingCalls).toBe(1);
    expect(failures(await receiver.waitFor(2))).toEqual(failures([a, b]));
    expect(dialled(log)).toEqual([]);
  });

  it("the client's list ends the waiting calls the agency's key placed on the client's agents", async () => {
    const now = FRIDAY_EVENING;
    const { app, log, agency, client } = await agencyAndClient(() => now);
    const agencyReceiver = await startReceiver();
    const clientReceiver = await startReceiver();
    await setWebhook(app.storage, agency.accountId, agencyReceiver.url, { now: app.now(), allowPrivate: true });
    await setWebhook(app.storage, client.accountId, clientReceiver.url, { now: app.now(), allowPrivate: true });
    const agentId = await officeHoursAgent(app, client.accountId);
    // The agency's key on the client's agent, outside its window: the agency's calls, listed for the client.
    const call = async (phone: string) =>
      callIdOf(await trigger(app, agency.key, { phone_number: phone, agent_id: agentId }));
    const [added, imported, free] = [
      await call('+14155550231'),
      await call('+14155550232'),
      await call('+14155550233'),
    ];
    await app.dispatcher!.settle();
    expect(
      (await prismaOf(app).call.findUniqueOrThrow({ where: { id: added } })).listedForAccountId,
      'the call is listed for the client',
    ).toBe(client.accountId);

    // Dashboard and callctl add through addToDoNotCall; the import ends its calls batch by batch.
    const result = await addToDoNotCall(app.storage, {
      accountId: client.accountId,
      phoneNumber: '+14155550231',
      actor: OPERATOR,
      now,
    });
    expect(result.waiting_calls_ended).toBe(1);
    const outcome = await importDoNotCall(app.storage, {
      accountId: client.accountId,
      file: Buffer.from('phone_number,reason\n+14155550232,asked\n'),
      actor: OPERATOR,
      now,
      maxBytes: 1024,
    });
    expect(outcome).toMatchObject({ ok: true, added: 1, waitingCallsEnded: 1 });

    await expectEndedNow(app, [added, imported]);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: free } })).status).toBe('initiated');
    // The calls are the agency's: its queue counts them, and their events go to its endpoint alone.
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: agency.accountId } })).waitingCalls).toBe(1);
    expect(failures(await agencyReceiver.waitFor(2))).toEqual(failures([added, imported]));
    await app.dispatcher!.settle();
    expect(await prismaOf(app).webhookDelivery.count({ where: { callId: { in: [added, imported] } } })).toBe(2);
    expect(clientReceiver.received).toEqual([]);
    expect(dialled(log)).toEqual([]);
  });
});
