// The voice-agent runtime's API end to end over the Twilio dialer (a local stand-in) and a real webhook receiver:
// the context behind a context token, every way a token is refused, results before, during and after the terminal
// event's wait, exactly one terminal event, bad input, an opt-out said on the call, and the per-call rate limit.
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeContext } from '../../schemas/agent-runtime.js';
import { WebhookEvent } from '../../schemas/webhook.js';
import type { App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { signContextToken } from '../../src/domain/context-token.js';
import { sqlPool } from '../../src/storage/database.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { forceCall, lockWaiters, whileHolding } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { ACCOUNT_SID, AGENT_PHONE, TwilioStandIn, twilioCallback, twilioEnv } from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';

const WAIT_SECONDS = 2;
const standIn = new TwilioStandIn();
let app: App;
let tenant: Tenant;
let hooks: Receiver;
let phoneCounter = 0;

beforeAll(async () => {
  const apiBaseUrl = await standIn.start();
  app = (
    await buildTestApp({
      env: {
        ...twilioEnv(apiBaseUrl),
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        AGENT_RESULT_WAIT_SECONDS: String(WAIT_SECONDS),
        MAX_CONCURRENT_CALLS: '50',
        AUTH_FAILURES_PER_MINUTE: '1000',
      },
    })
  ).app;
  tenant = await createTenant(app.storage);
  hooks = await startReceiver();
  await setWebhook(app.storage, tenant.accountId, hooks.url, { now: app.now(), allowPrivate: true });
});

afterAll(async () => {
  await hooks.stop();
});

const status = (sid: string, to: string, callStatus: string, more: Record<string, string> = {}) => ({
  AccountSid: ACCOUNT_SID,
  CallSid: sid,
  CallStatus: callStatus,
  Direction: 'outbound-api',
  From: AGENT_PHONE,
  To: to,
  ...more,
});

/** A call triggered with `body`, dialled through the stand-in and answered; its token for attempt 1. */
async function answeredCall(body: Record<string, unknown> = {}) {
  const phone = `+1415555${String(3000 + ++phoneCounter)}`;
  const callId = callIdOf(await trigger(app, tenant.key, { phone_number: phone, ...body }));
  const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
  const sid = create!.sid;
  expect((await twilioCallback(app, 'status', callId, status(sid, phone, 'in-progress'))).statusCode).toBe(204);
  return { callId, sid, phone, token: await app.contextTokens.sign(callId, 1) };
}

const hangUp = (call: { callId: string; sid: string; phone: string }) =>
  twilioCallback(app, 'status', call.callId, status(call.sid, call.phone, 'completed', { CallDuration: '42' }));

const context = (callId: string, token: string | null) =>
  app.inject({
    method: 'GET',
    url: `/agent-runtime/v1/calls/${callId}`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });

const postResult = (callId: string, token: string, body: unknown) =>
  app.inject({
    method: 'POST',
    url: `/agent-runtime/v1/calls/${callId}/result`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The terminal events the receiver has heard for the call. */
function terminalEvents(callId: string): WebhookEvent[] {
  return hooks.received
    .map((r) => JSON.parse(r.body) as WebhookEvent)
    .filter((e) => e.data.call_id === callId && e.type !== 'call.started');
}

const storedResult = (callId: string) => prismaOf(app).callResult.findUnique({ where: { callId } });

describe('GET /agent-runtime/v1/calls/{call_id}', () => {
  it("answers the call's context, metadata exactly as the trigger wrote it", async () => {
    const metadataText = '{"z":1,"2":"two","a":null,"crm":"L-42"}';
    const phone = '+14155559001';
    const response = await trigger(
      app,
      tenant.key,
      `{"phone_number":"${phone}","name":"Ada","email":"ada@example.com","metadata":${metadataText}}`,
    );
    const callId = callIdOf(response);
    const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
    await twilioCallback(app, 'status', callId, status(create!.sid, phone, 'in-progress'));
    const answer = await context(callId, await app.contextTokens.sign(callId, 1));
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain(`"metadata":${metadataText}`);
    const body = answer.json<RuntimeContext>();
    expect(Value.Check(RuntimeContext, body)).toBe(true);
    expect(body).toEqual({
      call_id: callId,
      agent_id: tenant.agentId,
      agent_name: expect.any(String) as string,
      account_id: tenant.accountId,
      from_number: AGENT_PHONE,
      to_number: phone,
      attempt: 1,
      name: 'Ada',
      email: 'ada@example.com',
      metadata: { z: 1, 2: 'two', a: null, crm: 'L-42' },
      scheduled_at: null,
      timezone: expect.any(String) as string,
    });
  });

  it('refuses every token that is not for this call and attempt, or no longer valid: 401, the envelope', async () => {
    const call = await answeredCall();
    const other = await answeredCall();
    const key = Buffer.from((await prismaOf(app).signingKey.findFirstOrThrow()).key, 'base64');
    const tampered = `${call.token.slice(0, -2)}${call.token.endsWith('A') ? 'BB' : 'AA'}`;
    const refused = [
      null,
      'not-a-token',
      tampered,
      other.token,
      await app.contextTokens.sign(call.callId, 2),
      signContextToken(Buffer.alloc(32, 7), { callId: call.callId, attempt: 1, now: app.now() }),
      signContextToken(key, { callId: call.callId, attempt: 1, now: new Date(app.now().getTime() - 7 * 3600_000) }),
    ];
    for (const token of refused) {
      const answer = await context(call.callId, token);
      expect(answer.statusCode, String(token)).toBe(401);
      expect(answer.json()).toEqual({ success: false, error: 'Invalid context token' });
      if (token !== null) expect((await postResult(call.callId, token, { outcome: 'x' })).statusCode).toBe(401);
    }
    // A call that does not exist, with a token the service signed for it.
    const ghost = '0190a0b0-0000-7000-8000-00000000dead';
    expect((await context(ghost, await app.contextTokens.sign(ghost, 1))).statusCode).toBe(401);
    // The call ended more than 15 minutes ago.
    await hangUp(call);
    await forceCall(prismaOf(app), call.callId, { endedAt: new Date(app.now().getTime() - 16 * 60_000) });
    expect((await context(call.callId, call.token)).statusCode).toBe(401);
    expect((await postResult(call.callId, call.token, { outcome: 'late' })).statusCode).toBe(401);
    expect(await storedResult(call.callId)).toBeNull();
  });

  it("another tenant's call: neither token opens the other's context or takes its result", async () => {
    const ours = await answeredCall();
    const otherTenant = await createTenant(app.storage);
    const phone = '+14155559002';
    const theirs = callIdOf(await trigger(app, otherTenant.key, { phone_number: phone, name: 'Their Lead' }));
    const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(theirs)), Boolean);
    await twilioCallback(app, 'status', theirs, status(create!.sid, phone, 'in-progress'));
    const theirToken = await app.contextTokens.sign(theirs, 1);
    expect((await context(theirs, theirToken)).json<RuntimeContext>().account_id).toBe(otherTenant.accountId);
    for (const [callId, token] of [
      [theirs, ours.token],
      [ours.callId, theirToken],
    ] as const) {
      const answer = await context(callId, token);
      expect(answer.statusCode).toBe(401);
      expect(answer.body).not.toContain('Their Lead');
      expect((await postResult(callId, token, { outcome: 'stolen' })).statusCode).toBe(401);
    }
    expect(await storedResult(theirs)).toBeNull();
    expect(await storedResult(ours.callId)).toBeNull();
  });
});

describe('POST /agent-runtime/v1/calls/{call_id}/result', () => {
  const RESULT_TEXT =
    '{"outcome":"appointment_booked","summary":"Booked Thursday.","data":{"b":1,"2":"x","a":true},' +
    '"transcript":[{"speaker":"agent","text":"Hi","at":"2054-12-01T10:00:00Z"}],"recording_url":"https://r.example.com/1.mp3"}';

  it('a result before hang-up: the one call.completed carries it at once, data in its written order', async () => {
    const call = await answeredCall();
    expect((await postResult(call.callId, call.token, RESULT_TEXT)).json()).toEqual({ success: true });
    const hungUp = Date.now();
    await hangUp(call);
    const [event] = await waitFor(
      () => terminalEvents(call.callId),
      (e) => e.length === 1,
    );
    expect(Date.now() - hungUp).toBeLessThan(WAIT_SECONDS * 1000);
    expect(Value.Check(WebhookEvent, event)).toBe(true);
    expect(event!.type).toBe('call.completed');
    expect(event!.data.result).toMatchObject({
      outcome: 'appointment_booked',
      summary: 'Booked Thursday.',
      transcript_url: null,
      opt_out: false,
    });
    const raw = hooks.received.find((r) => r.body.includes(call.callId) && r.body.includes('call.completed'))!.body;
    expect(raw).toContain('"data":{"b":1,"2":"x","a":true}');
    expect((await storedResult(call.callId))?.inEvent).toBe(true);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: call.callId } })).outcome).toBe(
      'appointment_booked',
    );
  });

  it('a result during the wait after hang-up goes out with the event, which waited for it', async () => {
    const call = await answeredCall();
    await hangUp(call);
    await new Promise((r) => setTimeout(r, 300));
    expect(terminalEvents(call.callId)).toEqual([]);
    expect((await postResult(call.callId, call.token, { outcome: 'callback_requested' })).statusCode).toBe(200);
    const [event] = await waitFor(
      () => terminalEvents(call.callId),
      (e) => e.length === 1,
      1500,
    );
    expect(event!.data.result?.outcome).toBe('callback_requested');
    // The same body again: nothing changes. Another one after the event went: refused.
    expect((await postResult(call.callId, call.token, { outcome: 'callback_requested' })).statusCode).toBe(200);
    const refused = await postResult(call.callId, call.token, { outcome: 'something_else' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ success: false, error: 'Result already delivered' });
    expect((await storedResult(call.callId))?.body).toMatchObject({ outcome: 'callback_requested' });
    await new Promise((r) => setTimeout(r, 300));
    expect(terminalEvents(call.callId)).toHaveLength(1);
  });

  it('without a result the event goes when the wait is over; a late result is kept, no second event', async () => {
    const call = await answeredCall();
    const hungUp = Date.now();
    await hangUp(call);
    const [event] = await waitFor(
      () => terminalEvents(call.callId),
      (e) => e.length === 1,
      10_000,
    );
    expect(Date.now() - hungUp).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 100);
    expect(event!.data.result).toBeNull();
    expect((await postResult(call.callId, call.token, { outcome: 'late_one' })).statusCode).toBe(200);
    expect(await storedResult(call.callId)).toMatchObject({ inEvent: false, body: { outcome: 'late_one' } });
    expect((await postResult(call.callId, call.token, { outcome: 'late_one' })).statusCode).toBe(200);
    expect((await postResult(call.callId, call.token, { outcome: 'later_one' })).statusCode).toBe(409);
    await new Promise((r) => setTimeout(r, 300));
    expect(terminalEvents(call.callId)).toHaveLength(1);
  });

  /**
   * Runs `first` and then `second` while the call's row is locked (as a transition or a result holds it), each once it
   * waits for that lock, then lets them go in that order: `second` began before `first` committed.
   */
  async function queuedOnTheCall<A, B>(callId: string, first: () => Promise<A>, second: () => Promise<B>) {
    const pool = sqlPool(prismaOf(app));
    const started = await whileHolding(pool, async (client) => {
      await client.query('SELECT id FROM calls WHERE id = $1::uuid FOR UPDATE', [callId]);
      const a = first();
      await waitFor(
        () => lockWaiters(pool),
        (n) => n === 1,
      );
      const b = second();
      await waitFor(
        () => lockWaiters(pool),
        (n) => n === 2,
      );
      return { a, b };
    });
    return [await started.a, await started.b] as const;
  }

  it('a result in while the hang-up waited for the call: the event carries it at once', async () => {
    const call = await answeredCall();
    const hungUp = Date.now();
    const [posted] = await queuedOnTheCall(
      call.callId,
      () => postResult(call.callId, call.token, { outcome: 'queued_first' }),
      () => hangUp(call),
    );
    expect(posted.statusCode).toBe(200);
    const [event] = await waitFor(
      () => terminalEvents(call.callId),
      (e) => e.length === 1,
      10_000,
    );
    expect(event!.data.result?.outcome).toBe('queued_first');
    expect(Date.now() - hungUp).toBeLessThan(WAIT_SECONDS * 1000);
    expect((await storedResult(call.callId))?.inEvent).toBe(true);
  });

  it('the same result twice, the second waiting behind the first: both 200, carried by the one event', async () => {
    const call = await answeredCall();
    await hangUp(call);
    const body = { outcome: 'sent_twice' };
    const posts = await queuedOnTheCall(
      call.callId,
      () => postResult(call.callId, call.token, body),
      () => postResult(call.callId, call.token, body),
    );
    expect(posts.map((p) => p.statusCode)).toEqual([200, 200]);
    const [event] = await waitFor(
      () => terminalEvents(call.callId),
      (e) => e.length === 1,
      10_000,
    );
    expect(event!.data.result?.outcome).toBe('sent_twice');
    expect((await storedResult(call.callId))?.inEvent).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(terminalEvents(call.callId)).toHaveLength(1);
  });

  it('refuses bad input with 400 naming the field, and stores nothing', async () => {
    const call = await answeredCall();
    const bad: [unknown, string][] = [
      [{ outcome: 'Not A Label' }, 'outcome'],
      [{ outcome: 'x'.repeat(65) }, 'outcome'],
      [{ summary: 's'.repeat(4001) }, 'summary'],
      [{ summary: 'nul\u0000' }, 'summary'],
      [{ data: { nested: { a: 1 } } }, 'data'],
      [{ data: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'data'],
      ['{"data":{"a":1,"a":2}}', 'data'],
      [{ transcript: [{ speaker: 'bot', text: 'hi', at: '2054-12-01T10:00:00Z' }] }, 'transcript'],
      [{ transcript: [{ speaker: 'agent', text: 'hi', at: 'yesterday' }] }, 'transcript'],
      [{ transcript: Array(501).fill({ speaker: 'agent', text: 'hi', at: '2054-12-01T10:00:00Z' }) }, 'transcript'],
      [{ transcript_url: 'http://example.com/t' }, 'transcript_url'],
      [{ recording_url: 'javascript:alert(1)' }, 'recording_url'],
      [{ opt_out: 'yes' }, 'opt_out'],
      [{ extra: 1 }, 'extra'],
      ['[]', 'body'],
    ];
    for (const [body, field] of bad) {
      const answer = await postResult(call.callId, call.token, body);
      expect(answer.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.json<{ error: string }>().error.toLowerCase()).toContain(field);
    }
    expect(await storedResult(call.callId)).toBeNull();
  });

  it("opt_out puts the number on the account's list, audited as the agent's, and ends its waiting calls", async () => {
    const call = await answeredCall();
    const waiting = callIdOf(
      await trigger(app, tenant.key, {
        phone_number: call.phone,
        scheduled_at: new Date(app.now().getTime() + 86_400_000).toISOString(),
      }),
    );
    expect((await postResult(call.callId, call.token, { outcome: 'not_interested', opt_out: true })).statusCode).toBe(
      200,
    );
    const entry = await prismaOf(app).doNotCallEntry.findFirst({
      where: { accountId: tenant.accountId, phoneNumber: call.phone },
    });
    expect(entry).toMatchObject({ reason: 'Asked during the call', addedBy: 'agent' });
    expect(
      await prismaOf(app).auditEntry.count({
        where: { accountId: tenant.accountId, actorKind: 'agent', action: 'do_not_call_added' },
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: waiting } })).toMatchObject({
      status: 'failed',
      failureReason: 'do_not_call',
    });
    // The call that is on the line is not ended by it.
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: call.callId } })).status).toBe('in_progress');
  });

  it('limits each call to 60 requests a minute; a refused token spends none of it', async () => {
    const call = await answeredCall();
    for (let i = 0; i < 20; i++) expect((await context(call.callId, 'bad')).statusCode).toBe(401);
    const codes: number[] = [];
    for (let i = 0; i < 61; i++) codes.push((await context(call.callId, call.token)).statusCode);
    expect(codes.slice(0, 60).every((c) => c === 200)).toBe(true);
    expect(codes[60]).toBe(429);
  });
});
