// A call that ends before any dial (canceled, stopped by a do-not-call list, expired) made no attempt: its call.failed
// says attempt 0 and attempts 0, validates against the published JSON Schema (openapi/schemas/CallFailedEvent.json),
// and callctl calls show says the same. One that ends while it waits for a retry names the attempt it last dialled.
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { cancelCall, showCall } from '../../src/admin/calls.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { SIMULATED_BUSY_THEN_ANSWERS } from '../../src/dispatch/simulated-dialer.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceAgent } from '../helpers/seed.js';

/** Friday 18:30 in New York: the office-hours window is shut until Monday, so accepted calls wait. */
const FRIDAY_EVENING = new Date('2054-11-27T23:30:00Z');

type Validator = ((value: unknown) => boolean) & { errors?: unknown };
const ajv = new (Ajv as unknown as typeof Ajv.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);
/** The committed schema, as an integrator downloads it. */
const publishedCallFailed = ajv.compile(
  JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'openapi/schemas/CallFailedEvent.json'), 'utf8')) as object,
) as Validator;

async function setUp() {
  const clock = { now: FRIDAY_EVENING };
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120', QUEUED_CALL_TTL_HOURS: '2' },
  });
  const tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, 'https://hooks.example.com/calls', {
    now: app.now(),
    allowPrivate: false,
  });
  const { id: agentId } = await createAgent(app.storage, {
    now: app.now(),
    accountId: tenant.accountId,
    name: 'office hours',
    phone: '+14155550111',
    timezone: 'America/New_York',
    windows: ['mon-fri 09:00-17:00'],
    outsideWindow: 'queue',
  });
  const call = async (phone: string) =>
    callIdOf(await trigger(app, tenant.key, { phone_number: phone, agent_id: agentId }));
  const at = async (time: Date) => {
    clock.now = time;
    await app.dispatcher!.settle();
  };
  return { app, tenant, clock, call, at, agentId };
}

async function eventsOf(app: App, callId: string): Promise<WebhookEvent[]> {
  const deliveries = await prismaOf(app).webhookDelivery.findMany({
    where: { callId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return deliveries.map((d) => json<WebhookEvent>(d.payload));
}

/** The call's one event: call.failed for `reason`, no attempt made, valid against the published schema. */
async function expectEndedBeforeDial(app: App, callId: string, reason: string) {
  const events = await eventsOf(app, callId);
  expect(events.map((e) => e.type)).toEqual(['call.failed']);
  const [event] = events;
  expect(event!.data).toMatchObject({
    failure_reason: reason,
    attempt: 0,
    attempts: 0,
    attempt_outcomes: [],
    started_at: null,
  });
  expect(publishedCallFailed(event), JSON.stringify(publishedCallFailed.errors)).toBe(true);
  const { call } = await showCall(app.storage, callId, OPERATOR);
  expect(call).toMatchObject({ failure_reason: reason, attempt: 0, attempts: 0, attempt_outcomes: [] });
}

describe('a call that ended before any dial', () => {
  it('canceled while it waited for its window: attempt 0, attempts 0', async () => {
    const { app, call, at } = await setUp();
    const callId = await call('+14155550201');
    await at(FRIDAY_EVENING);
    expect((await showCall(app.storage, callId, OPERATOR)).call).toMatchObject({
      status: 'initiated',
      attempt: 0,
      attempts: 0,
    });
    await cancelCall(app.storage, callId, OPERATOR, new Date(FRIDAY_EVENING.getTime() + 60_000));
    await expectEndedBeforeDial(app, callId, 'canceled');
  });

  it('its number put on a do-not-call list while it waited: attempt 0, attempts 0', async () => {
    const { app, tenant, call, at } = await setUp();
    const callId = await call('+14155550202');
    await at(FRIDAY_EVENING);
    await addToDoNotCall(app.storage, {
      now: app.now(),
      accountId: tenant.accountId,
      phoneNumber: '+14155550202',
      actor: OPERATOR,
    });
    // Whether the list ends it at once or when it is next due, by Monday's opening it has ended undialled.
    await at(new Date('2054-11-30T14:00:00Z'));
    await expectEndedBeforeDial(app, callId, 'do_not_call');
  });

  it('expired in the queue: attempt 0, attempts 0', async () => {
    const { app, call, at, agentId } = await setUp();
    const callId = await call('+14155550203');
    await at(FRIDAY_EVENING);
    // Its time to live (2 hours) counts from Monday's opening; the window then moves to Wednesdays, so it still waits.
    await forceAgent(prismaOf(app), agentId, { callingWindows: [{ days: [3], start: '09:00', end: '17:00' }] });
    await at(new Date('2054-11-30T17:00:00Z'));
    await expectEndedBeforeDial(app, callId, 'expired');
  });

  it('a call that ends while it waits for a retry names the attempt it last dialled, not the one it waited for', async () => {
    const { app, tenant, at } = await setUp();
    await forceAgent(prismaOf(app), tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [30] });
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
    await at(FRIDAY_EVENING);
    await at(new Date(FRIDAY_EVENING.getTime() + 30));
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      status: 'initiated',
      attempt: 2,
    });
    await cancelCall(app.storage, callId, OPERATOR, new Date(FRIDAY_EVENING.getTime() + 60_000));
    const events = await eventsOf(app, callId);
    expect(events.map((e) => [e.type, e.data.attempt, e.data.attempts])).toEqual([
      ['call.started', 1, 1],
      ['call.failed', 1, 1],
    ]);
    expect(publishedCallFailed(events[1]), JSON.stringify(publishedCallFailed.errors)).toBe(true);
  });
});
