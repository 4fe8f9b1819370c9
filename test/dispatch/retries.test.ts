// Attempts under an agent's retry policy, with the simulated dialer and an injected clock: a retried call keeps its id,
// waits for its next attempt as initiated (its window, slot and queue again), sends call.started once per attempt and
// exactly one terminal event with every attempt's outcome; the policy is read when an attempt ends; cancel, expiry and
// idempotency cover the whole chain.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cancelCall } from '../../src/admin/calls.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { SIMULATED_BUSY_THEN_ANSWERS, SIMULATED_VOICEMAIL } from '../../src/dispatch/simulated-dialer.js';
import { timeline } from '../../src/views/pages/call-timeline.js';
import { UTC_TIMES } from '../../src/views/format/shown-times.js';
import type { CallDetail } from '../../src/storage/index.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant, updateAgentSettings } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceAgent, forceCall } from '../helpers/seed.js';

const RING_MS = 30;
const TALK_MS = 120;
const MINUTE = 60_000;
const BUSY = '+15005550001';
const NO_ANSWER = '+15005550002';
const T0 = new Date('2054-11-25T10:00:00.000Z');

interface Policy {
  maxAttempts: number;
  retryOn: unknown;
  waits?: unknown;
}

/** An app on a fresh database with a clock the test moves, a tenant with a webhook, and its dial log. */
async function setUp(env: Record<string, string> = {}) {
  const clock = { now: T0 };
  const dialLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-retries-')), 'dials.log');
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: {
      DISPATCH_ENABLED: 'true',
      SIMULATED_RING_MS: String(RING_MS),
      SIMULATED_TALK_MS: String(TALK_MS),
      SIMULATED_DIAL_LOG: dialLog,
      ...env,
    },
  });
  const tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, 'https://hooks.example.com/calls', {
    allowPrivate: false,
    now: app.now(),
  });
  /** Moves the clock to `at` and lets the dispatcher do everything due by then. */
  const at = async (time: Date) => {
    clock.now = time;
    await app.dispatcher!.settle();
  };
  const dials = () => (fs.existsSync(dialLog) ? fs.readFileSync(dialLog, 'utf8').split('\n').filter(Boolean) : []);
  return { app, tenant, clock, at, dials };
}

/** Sets the agent's retry policy in the database, as the agent settings store it. */
async function setPolicy(app: App, agentId: string, policy: Policy) {
  await forceAgent(prismaOf(app), agentId, {
    maxAttempts: policy.maxAttempts,
    retryOn: policy.retryOn as string[],
    retryWaitsMinutes: policy.waits ?? [30, 120, 1440],
  });
}

const later = (time: Date, ms: number) => new Date(time.getTime() + ms);

async function callOf(app: App, callId: string) {
  return prismaOf(app).call.findUniqueOrThrow({
    where: { id: callId },
    include: { events: { orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] } },
  });
}

/** The webhook events written for a call, in order. */
async function eventsOf(app: App, callId: string): Promise<WebhookEvent[]> {
  const deliveries = await prismaOf(app).webhookDelivery.findMany({
    where: { callId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return deliveries.map((d) => json<WebhookEvent>(d.payload));
}

async function waitingCounter(app: App, tenant: Tenant) {
  return (await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).waitingCalls;
}

describe('retries', () => {
  it('a busy attempt is dialled again after the wait under the same call id; one call.started per attempt, one terminal event with every outcome', async () => {
    const { app, tenant, at, dials } = await setUp();
    await setPolicy(app, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], waits: [30] });
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
    await at(T0);
    expect(await callOf(app, callId)).toMatchObject({ status: 'dialing', attempt: 1, startedAt: T0 });

    // Attempt 1 rings out busy: back to initiated, attempt 2 due 30 minutes after it ended.
    const ended1 = later(T0, RING_MS);
    const next = later(ended1, 30 * MINUTE);
    await at(ended1);
    const waiting = await callOf(app, callId);
    expect(waiting).toMatchObject({
      status: 'initiated',
      failureReason: null,
      attempt: 2,
      attemptOutcomes: [{ attempt: 1, outcome: 'busy', at: ended1.toISOString() }],
      nextAttemptAt: next,
      notBefore: next,
      // The default time to live (24 h) counts from the next attempt.
      expiresAt: later(next, 24 * 60 * MINUTE),
      startedAt: null,
      answeredAt: null,
      endedAt: null,
      durationSeconds: null,
      providerCallId: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      dialAttempts: 1,
    });
    expect(waiting.events.at(-1)).toMatchObject({
      fromStatus: 'dialing',
      toStatus: 'initiated',
      failureReason: 'busy',
      source: 'provider',
      occurredAt: ended1,
    });
    expect(await waitingCounter(app, tenant)).toBe(1);
    expect((await eventsOf(app, callId)).map((e) => e.type)).toEqual(['call.started']);

    // Not before its time.
    await at(later(next, -1));
    expect(await callOf(app, callId)).toMatchObject({ status: 'initiated', attempt: 2 });

    await at(next);
    expect(await callOf(app, callId)).toMatchObject({
      status: 'dialing',
      attempt: 2,
      startedAt: next,
      nextAttemptAt: null,
      dialAttempts: 2,
    });
    expect(await waitingCounter(app, tenant)).toBe(0);

    const ended2 = later(next, RING_MS + TALK_MS);
    await at(ended2);
    const done = await callOf(app, callId);
    expect(done).toMatchObject({
      status: 'completed',
      attempt: 2,
      answeredAt: later(next, RING_MS),
      endedAt: ended2,
      attemptOutcomes: [
        { attempt: 1, outcome: 'busy', at: ended1.toISOString() },
        { attempt: 2, outcome: 'completed', at: ended2.toISOString() },
      ],
    });
    expect(done.events.map((e) => [e.fromStatus, e.toStatus])).toEqual([
      [null, 'initiated'],
      ['initiated', 'dialing'],
      ['dialing', 'initiated'],
      ['initiated', 'dialing'],
      ['dialing', 'in_progress'],
      ['in_progress', 'completed'],
    ]);

    const events = await eventsOf(app, callId);
    expect(events.map((e) => [e.type, e.data.call_id, e.data.attempt, e.data.attempts])).toEqual([
      ['call.started', callId, 1, 1],
      ['call.started', callId, 2, 2],
      ['call.completed', callId, 2, 2],
    ]);
    expect(events[1]!.data.attempt_outcomes).toEqual([{ attempt: 1, outcome: 'busy', at: ended1.toISOString() }]);
    expect(events[2]!.data).toMatchObject({
      status: 'completed',
      started_at: next.toISOString(),
      attempt_outcomes: [
        { attempt: 1, outcome: 'busy', at: ended1.toISOString() },
        { attempt: 2, outcome: 'completed', at: ended2.toISOString() },
      ],
    });
    // Each attempt dialled once.
    expect(dials()).toEqual([callId, `${callId}/2`]);
    // The dashboard's timeline tells the retry apart from the acceptance.
    const detail = { ...done, metadata: '{}', deliveries: [] } as unknown as CallDetail;
    expect(timeline(detail, ended2, UTC_TIMES).map((e) => e.what)).toEqual([
      'Accepted',
      'Dialling',
      'Attempt failed: Busy; to be dialled again',
      'Dialling',
      'Answered',
      'Completed',
    ]);
  });

  it('stops after max_attempts with the last outcome as the reason; the last wait repeats', async () => {
    const { app, tenant, at, dials } = await setUp();
    await setPolicy(app, tenant.agentId, { maxAttempts: 3, retryOn: ['busy', 'no_answer'], waits: [2] });
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: BUSY }));
    await at(T0);
    let dialled = T0;
    const ends: Date[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const ended = later(dialled, RING_MS);
      ends.push(ended);
      await at(ended);
      if (attempt < 3) {
        expect(await callOf(app, callId)).toMatchObject({
          status: 'initiated',
          attempt: attempt + 1,
          nextAttemptAt: later(ended, 2 * MINUTE),
        });
        dialled = later(ended, 2 * MINUTE);
        await at(dialled);
        expect(await callOf(app, callId)).toMatchObject({ status: 'dialing', attempt: attempt + 1 });
      }
    }
    const outcomes = ends.map((end, i) => ({ attempt: i + 1, outcome: 'busy', at: end.toISOString() }));
    expect(await callOf(app, callId)).toMatchObject({
      status: 'failed',
      failureReason: 'busy',
      attempt: 3,
      nextAttemptAt: null,
      attemptOutcomes: outcomes,
      dialAttempts: 3,
    });
    const events = await eventsOf(app, callId);
    expect(events.map((e) => [e.type, e.data.attempt])).toEqual([
      ['call.started', 1],
      ['call.started', 2],
      ['call.started', 3],
      ['call.failed', 3],
    ]);
    expect(events[3]!.data).toMatchObject({ failure_reason: 'busy', attempts: 3, attempt_outcomes: outcomes });
    expect(dials()).toEqual([callId, `${callId}/2`, `${callId}/3`]);
  });

  it('no retry: the default policy, an outcome not in retry_on, a policy changed while dialling, an unreadable policy', async () => {
    const { app, tenant, clock, at } = await setUp();
    const cases: { name: string; before: Policy; whileDialling?: Policy; number: string; reason: string }[] = [
      { name: 'default', before: { maxAttempts: 1, retryOn: [] }, number: BUSY, reason: 'busy' },
      { name: 'not listed', before: { maxAttempts: 3, retryOn: ['busy'] }, number: NO_ANSWER, reason: 'no_answer' },
      {
        name: 'read when the attempt ends',
        before: { maxAttempts: 3, retryOn: ['busy'] },
        whileDialling: { maxAttempts: 1, retryOn: ['busy'] },
        number: BUSY,
        reason: 'busy',
      },
      // Stored by hand: `rejected` is never retried, and a list with it is not a policy.
      {
        name: 'rejected listed',
        before: { maxAttempts: 3, retryOn: ['busy', 'rejected'] },
        number: BUSY,
        reason: 'busy',
      },
      { name: 'no waits', before: { maxAttempts: 3, retryOn: ['busy'], waits: [] }, number: BUSY, reason: 'busy' },
      {
        name: 'negative wait',
        before: { maxAttempts: 3, retryOn: ['busy'], waits: [-1] },
        number: BUSY,
        reason: 'busy',
      },
      { name: 'too many', before: { maxAttempts: 6, retryOn: ['busy'] }, number: BUSY, reason: 'busy' },
    ];
    let time = T0;
    for (const c of cases) {
      await setPolicy(app, tenant.agentId, c.before);
      clock.now = time;
      const callId = callIdOf(await trigger(app, tenant.key, { phone_number: c.number }));
      await at(time);
      expect(await callOf(app, callId), c.name).toMatchObject({ status: 'dialing' });
      if (c.whileDialling) await setPolicy(app, tenant.agentId, c.whileDialling);
      time = later(time, RING_MS);
      await at(time);
      const call = await callOf(app, callId);
      expect(call, c.name).toMatchObject({
        status: 'failed',
        failureReason: c.reason,
        attempt: 1,
        attemptOutcomes: [{ attempt: 1, outcome: c.reason, at: time.toISOString() }],
      });
      expect(
        (await eventsOf(app, callId)).map((e) => [e.type, e.data.attempts]),
        c.name,
      ).toEqual([
        ['call.started', 1],
        ['call.failed', 1],
      ]);
      time = later(time, MINUTE);
    }
  });

  it('a call waiting for its next attempt can be canceled (audited with it) and expires after its time to live from the next attempt', async () => {
    const { app, tenant, at } = await setUp({ QUEUED_CALL_TTL_HOURS: '1' });
    await setPolicy(app, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], waits: [10] });
    const canceled = callIdOf(await trigger(app, tenant.key, { phone_number: BUSY }));
    const expiring = callIdOf(await trigger(app, tenant.key, { phone_number: BUSY }));
    await at(T0);
    const ended = later(T0, RING_MS);
    await at(ended);
    const next = later(ended, 10 * MINUTE);
    expect(await callOf(app, expiring)).toMatchObject({
      status: 'initiated',
      attempt: 2,
      expiresAt: later(next, 60 * MINUTE),
    });

    expect(await cancelCall(app.storage, canceled, { kind: 'operator' }, later(ended, MINUTE))).toMatchObject({
      call_id: canceled,
      status: 'failed',
      already_canceled: false,
    });
    const call = await callOf(app, canceled);
    expect(call).toMatchObject({
      status: 'failed',
      failureReason: 'canceled',
      attempt: 2,
      nextAttemptAt: null,
      attemptOutcomes: [{ attempt: 1, outcome: 'busy', at: ended.toISOString() }],
    });
    const audit = await prismaOf(app).auditEntry.findMany({ where: { accountId: tenant.accountId } });
    expect(audit.filter((e) => e.action === 'call_canceled')).toEqual([
      expect.objectContaining({ actorKind: 'operator', agencyId: tenant.accountId, detail: { call_id: canceled } }),
    ]);
    const failed = (await eventsOf(app, canceled)).at(-1)!;
    expect(failed).toMatchObject({
      type: 'call.failed',
      data: { failure_reason: 'canceled', attempt: 1, attempts: 1, started_at: null },
    });

    // The other one's window is shut when its next attempt is due: it waits, and expires an hour after that time.
    await forceAgent(prismaOf(app), tenant.agentId, {
      callingWindows: [{ days: [1], start: '09:00', end: '10:00' }],
      timezone: 'UTC',
    });
    await at(next);
    expect(await callOf(app, expiring)).toMatchObject({ status: 'initiated', attempt: 2 });
    await at(later(next, 60 * MINUTE));
    const expired = await callOf(app, expiring);
    expect(expired).toMatchObject({ status: 'failed', failureReason: 'expired', attempt: 2, nextAttemptAt: null });
    expect((await eventsOf(app, expiring)).map((e) => [e.type, e.data.attempts])).toEqual([
      ['call.started', 1],
      ['call.failed', 1],
    ]);
  });

  it('each attempt passes the calling window and the concurrency limit again', async () => {
    // A time to live past next week's opening.
    const { app, tenant, at } = await setUp({ MAX_CONCURRENT_CALLS: '1', QUEUED_CALL_TTL_HOURS: '240' });
    await setPolicy(app, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], waits: [5] });
    // Window: Wednesdays 10:00-10:06 UTC. Attempt 1 at 10:00, its retry due 10:05, its second try after the other
    // call (which holds the only slot) ends, then past 10:06: the next opening, a week later.
    await forceAgent(prismaOf(app), tenant.agentId, {
      callingWindows: [{ days: [3], start: '10:00', end: '10:06' }],
      timezone: 'UTC',
    });
    const retried = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
    await at(T0);
    const ended = later(T0, RING_MS);
    await at(ended);
    const next = later(ended, 5 * MINUTE);
    // Another call takes the slot before the retry is due, and talks past it.
    const other = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671' }));
    await at(ended);
    expect(await callOf(app, other)).toMatchObject({ status: 'dialing' });
    await at(later(ended, RING_MS));
    expect(await callOf(app, other)).toMatchObject({ status: 'in_progress' });
    // Hold the other call in progress (its talk is scripted from answeredAt): it answered "now" at every step.
    const hold = async (time: Date) => {
      await forceCall(prismaOf(app), other, { answeredAt: time });
      await at(time);
    };
    await hold(next);
    expect(await callOf(app, retried)).toMatchObject({ status: 'initiated', attempt: 2 });
    await hold(later(next, 30_000));
    expect(await callOf(app, retried)).toMatchObject({ status: 'initiated', attempt: 2 });
    // The other call ends after the window closed (10:06): the retry waits for the next opening.
    const closed = new Date('2054-11-25T10:07:00.000Z');
    await forceCall(prismaOf(app), other, { answeredAt: later(closed, -TALK_MS) });
    await at(closed);
    expect(await callOf(app, other)).toMatchObject({ status: 'completed' });
    const nextWeek = new Date('2054-12-02T10:00:00.000Z');
    expect(await callOf(app, retried)).toMatchObject({ status: 'initiated', attempt: 2, notBefore: nextWeek });
    await at(nextWeek);
    expect(await callOf(app, retried)).toMatchObject({ status: 'dialing', attempt: 2, startedAt: nextWeek });
  });

  it('an Idempotency-Key replay during and after the retries answers the same call, and adds none', async () => {
    const { app, tenant, at } = await setUp();
    await setPolicy(app, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], waits: [1] });
    const body = { phone_number: SIMULATED_BUSY_THEN_ANSWERS };
    const headers = { 'idempotency-key': 'crm-lead-42' };
    const first = await trigger(app, tenant.key, body, headers);
    const callId = callIdOf(first);
    await at(T0);
    await at(later(T0, RING_MS));
    const replayWaiting = await trigger(app, tenant.key, body, headers);
    expect([replayWaiting.statusCode, replayWaiting.json()]).toEqual([first.statusCode, first.json()]);
    const next = later(T0, RING_MS + MINUTE);
    await at(next);
    await at(later(next, RING_MS + TALK_MS));
    expect(await callOf(app, callId)).toMatchObject({ status: 'completed', attempt: 2 });
    const replayDone = await trigger(app, tenant.key, body, headers);
    expect([replayDone.statusCode, replayDone.json()]).toEqual([first.statusCode, first.json()]);
    expect(await prismaOf(app).call.count({ where: { accountId: tenant.accountId } })).toBe(1);
  });

  it('a voicemail, detected, is dialled again when retry_on lists it; the last attempt on a machine ends failed (voicemail)', async () => {
    const { app, tenant, at, dials } = await setUp();
    await setPolicy(app, tenant.agentId, { maxAttempts: 2, retryOn: ['voicemail'], waits: [10] });
    await updateAgentSettings(app.storage, tenant.agentId, {
      voicemail: 'leave_message',
      voicemailMessage: 'Hi {{name}}, please call us back.',
    });
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_VOICEMAIL, name: 'Ada' }));
    await at(T0);
    // Attempt 1: a machine answers and hears the message; the call waits for attempt 2 with the verdict reset.
    const answered1 = later(T0, RING_MS);
    const ended1 = later(answered1, TALK_MS);
    await at(answered1);
    expect(await callOf(app, callId)).toMatchObject({
      status: 'in_progress',
      answeredBy: 'machine',
      voicemailLeft: true,
    });
    await at(ended1);
    expect(await callOf(app, callId)).toMatchObject({
      status: 'initiated',
      attempt: 2,
      attemptOutcomes: [{ attempt: 1, outcome: 'voicemail', at: ended1.toISOString() }],
      answeredBy: null,
      voicemailLeft: null,
      nextAttemptAt: later(ended1, 10 * MINUTE),
    });
    // Attempt 2: the machine again, and no attempt is left.
    const start2 = later(ended1, 10 * MINUTE);
    await at(start2);
    await at(later(start2, RING_MS));
    const ended2 = later(start2, RING_MS + TALK_MS);
    await at(ended2);
    const done = await callOf(app, callId);
    expect(done).toMatchObject({
      status: 'failed',
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: true,
      attempt: 2,
    });
    expect(dials()).toEqual([callId, `${callId}/2`]);
    const events = await eventsOf(app, callId);
    expect(events.map((e) => [e.type, e.data.attempt])).toEqual([
      ['call.started', 1],
      ['call.started', 2],
      ['call.failed', 2],
    ]);
    expect(events[2]!.data).toMatchObject({
      failure_reason: 'voicemail',
      voicemail_left: true,
      answered_by: 'machine',
      attempts: 2,
      attempt_outcomes: [
        { attempt: 1, outcome: 'voicemail', at: ended1.toISOString() },
        { attempt: 2, outcome: 'voicemail', at: ended2.toISOString() },
      ],
    });
  });
});
