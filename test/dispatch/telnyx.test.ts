// The Telnyx dialer end to end against a local stand-in of Call Control v2: the dial, webhooks signed with ed25519 as
// Telnyx signs them (in order, duplicated, late, racing the dialer, forged, stale, signed with another key), every
// hangup cause mapped, refused dials, and the SDK's own verification. Retries: telnyx-retries.test.ts; voicemail:
// telnyx-voicemail.test.ts; the hand-off: telnyx-hand-off.test.ts.
import Telnyx from 'telnyx';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import {
  answeredByOfTelnyx,
  decodeClientState,
  encodeClientState,
  mapTelnyxHangup,
  TelnyxDialer,
} from '../../src/dispatch/telnyx-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import {
  AGENT_PHONE,
  CONNECTION_ID,
  PUBLIC,
  REFUSED_TO,
  signLikeTelnyx,
  TELNYX_API_KEY,
  TelnyxStandIn,
  telnyxEnv,
  telnyxKeyPair,
} from '../helpers/telnyx-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const standIn = new TelnyxStandIn();
let apiBaseUrl: string;
let app: App;
let key: string;
/** The app's clock runs ahead of the real one by this much: a test moves it to make a call last. */
let ahead = 0;

beforeAll(async () => {
  apiBaseUrl = await standIn.start();
  app = (
    await buildTestApp({
      env: telnyxEnv(apiBaseUrl, standIn.keys.publicKey),
      clock: () => new Date(Date.now() + ahead),
    })
  ).app;
  standIn.attach(app);
  key = (await createTenant(app.storage)).key;
});

/** Triggers a call and waits until Telnyx was asked to dial it (and, unless told, its id is recorded). */
async function place(phone = '+14155552671', options: { waitForId?: boolean } = {}) {
  const callId = callIdOf(await trigger(app, key, { phone_number: phone }));
  const dial = await waitFor(
    () => standIn.dials.find((d) => decodeClientState(d.body.client_state)?.callId === callId),
    Boolean,
  );
  if (options.waitForId !== false)
    await waitFor(
      () => prismaOf(app).call.findUnique({ where: { id: callId } }),
      (c) => c?.providerCallId === dial!.id,
    );
  return { callId, id: dial!.id, dial: dial! };
}

const snapshot = async (callId: string) => {
  const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } });
  return {
    status: call.status,
    failureReason: call.failureReason,
    answeredAt: call.answeredAt,
    durationSeconds: call.durationSeconds,
    providerCallId: call.providerCallId,
    events: call.events.length,
  };
};

describe('Telnyx dialer', () => {
  it('dials through Call Control, then follows the webhooks to completed with the duration; duplicates and late ones change nothing', async () => {
    const { callId, id, dial } = await place();
    expect(dial.body).toEqual({
      connection_id: CONNECTION_ID,
      to: '+14155552671',
      from: AGENT_PHONE,
      webhook_url: `${PUBLIC}/telephony/telnyx/events`,
      webhook_url_method: 'POST',
      client_state: encodeClientState({ callId, attempt: 1, voicemail: 'off' }),
      command_id: `dial:${callId}:1`,
      timeout_secs: 60,
    });
    expect(decodeClientState(dial.body.client_state)).toEqual({ callId, attempt: 1, voicemail: 'off' });
    await standIn.initiated(id);
    const dialing = await snapshot(callId);
    expect(dialing).toMatchObject({ status: 'dialing', providerCallId: id, answeredAt: null });

    const { stream } = await standIn.answer(id);
    expect(stream).not.toBeNull(); // to the stand-in's runtime (AGENT_STREAM_URL)
    const inProgress = await snapshot(callId);
    expect(inProgress).toMatchObject({ status: 'in_progress', events: dialing.events + 1 });
    expect(inProgress.answeredAt).toBeInstanceOf(Date);
    expect(standIn.commandsOf(id).map((c) => c.action)).toEqual(['streaming_start']);
    // Telnyx retries a webhook it thinks was lost: nothing moves, nothing is handed off twice.
    expect((await standIn.event(id, 'call.answered', { state: 'answered' })).statusCode).toBe(204);
    expect(await snapshot(callId)).toEqual(inProgress);
    expect(standIn.commandsOf(id)).toHaveLength(1);

    ahead += 42_000;
    await standIn.hangUp(id, 'normal_clearing');
    const completed = await snapshot(callId);
    expect(completed).toMatchObject({ status: 'completed', failureReason: null, events: inProgress.events + 1 });
    expect(completed.durationSeconds).toBeGreaterThanOrEqual(42);
    expect(completed.durationSeconds).toBeLessThanOrEqual(44);
    for (const [type, extra] of [
      ['call.hangup', { hangup_cause: 'user_busy' }],
      ['call.answered', {}],
      ['call.initiated', {}],
    ] as const)
      expect((await standIn.event(id, type, extra)).statusCode).toBe(204);
    expect(await snapshot(callId)).toEqual(completed);
    const sources = await prismaOf(app).callEvent.findMany({
      where: { callId },
      orderBy: { occurredAt: 'asc' },
      select: { toStatus: true, source: true },
    });
    expect(sources.filter((e) => e.source === 'provider').map((e) => e.toStatus)).toEqual(['in_progress', 'completed']);
  });

  it('the runtime ends the call by closing its socket, and a stream Telnyx cannot open is hung up, as on Twilio', async () => {
    const first = await place();
    await standIn.answer(first.id);
    await standIn.runtimeEnds(first.id);
    expect(standIn.commandsOf(first.id).map((c) => c.action)).toEqual(['streaming_start', 'hangup']);
    expect(await snapshot(first.callId)).toMatchObject({ status: 'completed', failureReason: null });

    const agentId = (await prismaOf(app).call.findUniqueOrThrow({ where: { id: first.callId } })).agentId;
    await forceAgent(prismaOf(app), agentId, { streamUrl: 'wss://nowhere.example.test/stream' });
    const second = await place();
    const { stream } = await standIn.answer(second.id);
    expect(stream).toBeNull();
    expect(standIn.commandsOf(second.id).map((c) => c.action)).toEqual(['streaming_start', 'hangup']);
    expect(await snapshot(second.callId)).toMatchObject({ status: 'completed' });
    await forceAgent(prismaOf(app), agentId, { streamUrl: null });
  });

  it.each([
    ['user_busy', 'busy'],
    ['timeout', 'no_answer'],
    ['no_answer', 'no_answer'],
    ['call_rejected', 'rejected'],
    ['not_found', 'provider_error'],
    ['unspecified', 'provider_error'],
    ['originator_cancel', 'canceled'],
  ])('a call that ends before an answer with %s fails with reason %s', async (cause, reason) => {
    const { callId, id } = await place();
    await standIn.initiated(id);
    await standIn.hangUp(id, cause);
    expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: reason, answeredAt: null });
    const outcomes = (await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).attemptOutcomes;
    expect(outcomes).toEqual([
      expect.objectContaining({ attempt: 1, outcome: reason === 'canceled' ? 'provider_error' : reason }),
    ]);
  });

  it('refuses missing, forged, tampered, stale and future signatures with 403 and changes nothing', async () => {
    const { callId, id } = await place();
    const before = await snapshot(callId);
    const busy = { hangup_cause: 'user_busy' };
    const now = Math.floor(Date.now() / 1000);
    const other = telnyxKeyPair();
    for (const options of [
      { signature: null },
      { signature: 'not base64!' },
      { signature: Buffer.alloc(64).toString('base64') },
      // Signed with another key pair: an attacker's, or another Telnyx account's.
      { keyPair: other },
      // Telnyx's own signature of another body (a replayed signature on a changed body).
      { signature: signLikeTelnyx(standIn.keys.privateKey, now, '{"data":{}}') },
      // Just outside the SDK's five minutes either way (a second past them: the clock may tick while it checks).
      { age: 302 },
      { age: -302 },
    ]) {
      const response = await standIn.event(id, 'call.hangup', busy, options);
      expect([response.statusCode, JSON.parse(response.body)]).toEqual([
        403,
        { success: false, error: 'Invalid Telnyx signature' },
      ]);
    }
    // The signature covers the timestamp: a good signature sent with another telnyx-timestamp is refused too.
    const body = JSON.stringify({ data: { event_type: 'call.hangup', payload: { call_control_id: id } } });
    const moved = await app.inject({
      method: 'POST',
      url: '/telephony/telnyx/events',
      payload: body,
      headers: {
        'content-type': 'application/json',
        'telnyx-timestamp': String(now - 1),
        'telnyx-signature-ed25519': signLikeTelnyx(standIn.keys.privateKey, now, body),
      },
    });
    expect(moved.statusCode).toBe(403);
    // Checked before anything is looked up: a forged webhook of no call is refused as forged, not as unknown.
    const nobody = encodeClientState({ callId: '00000000-0000-4000-8000-000000000000', attempt: 1, voicemail: 'off' });
    const unknown = await standIn.event(id, 'call.hangup', { ...busy, client_state: nobody }, { keyPair: other });
    expect(unknown.statusCode).toBe(403);
    expect(await snapshot(callId)).toEqual(before);
    // Within the SDK's five minutes, and signed with the account's key: accepted.
    expect((await standIn.event(id, 'call.hangup', busy, { age: 290 })).statusCode).toBe(204);
    expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: 'busy' });
  });

  it("what the route accepts is what the telnyx SDK's client.webhooks.unwrap accepts, with the key as the portal shows it", async () => {
    const { publicKey, privateKey } = standIn.keys;
    const client = new Telnyx({ apiKey: TELNYX_API_KEY, publicKey });
    const body = JSON.stringify({ data: { event_type: 'call.initiated', payload: {} } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = {
      'telnyx-timestamp': timestamp,
      'telnyx-signature-ed25519': signLikeTelnyx(privateKey, timestamp, body),
    };
    await expect(client.webhooks.unwrap(body, { headers })).resolves.toMatchObject({
      data: { event_type: 'call.initiated' },
    });
    const other = new Telnyx({ apiKey: TELNYX_API_KEY, publicKey: telnyxKeyPair().publicKey });
    await expect(other.webhooks.unwrap(body, { headers })).rejects.toThrow(/signature/i);
    expect(publicKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('unknown calls and calls whose call_control_id disagrees are 404; events of no call of ours are left alone', async () => {
    const { callId, id } = await place();
    const state = (c: string) => encodeClientState({ callId: c, attempt: 1, voicemail: 'off' });
    for (const client_state of [state('00000000-0000-4000-8000-000000000000'), state('not-a-uuid')]) {
      const response = await standIn.event(id, 'call.hangup', { hangup_cause: 'user_busy', client_state });
      expect([response.statusCode, JSON.parse(response.body)]).toEqual([
        404,
        { success: false, error: 'Call not found' },
      ]);
    }
    const another = await standIn.event(id, 'call.hangup', {
      hangup_cause: 'user_busy',
      call_control_id: 'v3:another',
    });
    expect(another.statusCode).toBe(404);
    for (const client_state of [undefined, 'bm90IGpzb24=', Buffer.from('{"leg":"sip-hand-off"}').toString('base64')])
      expect((await standIn.event(id, 'call.hangup', { hangup_cause: 'user_busy', client_state })).statusCode).toBe(
        204,
      );
    expect(await snapshot(callId)).toMatchObject({ status: 'dialing' });
  });

  it('a webhook that beats the dialer records the call_control_id with its update; the dialer then finds the call settled', async () => {
    const to = '+14155552673';
    standIn.hold(to);
    const { callId, id } = await place(to, { waitForId: false });
    expect(await snapshot(callId)).toMatchObject({ status: 'dialing', providerCallId: null });
    await standIn.hangUp(id, 'timeout');
    expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: 'no_answer', providerCallId: id });
    standIn.release(to);
    await app.dispatcher!.settle();
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    expect(call).toMatchObject({ status: 'failed', failureReason: 'no_answer', providerCallId: id, dialAttempts: 1 });
  });

  it("a dial Telnyx refuses fails the call with provider_error; the dialer's errors never carry the key", async () => {
    const { callId } = await place(REFUSED_TO, { waitForId: false });
    const call = await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.status === 'failed',
    );
    expect(call).toMatchObject({ failureReason: 'provider_error', providerCallId: null, dialAttempts: 1 });

    const request = {
      callId: '00000000-0000-4000-8000-000000000001',
      to: '+14155552675',
      from: AGENT_PHONE,
      agentId: 'a',
      name: null,
      email: null,
      voicemail: 'off' as const,
      voicemailMessage: null,
    };
    const options = { apiKey: TELNYX_API_KEY, connectionId: CONNECTION_ID, apiBaseUrl, publicBaseUrl: PUBLIC };
    const refused = await new TelnyxDialer({ ...options, apiKey: 'KEYwrong' }).dial(request).catch((e: Error) => e);
    expect((refused as Error).message).toBe(
      'Telnyx refused the call (HTTP 401, code 10009: Authentication failed (Could not understand the provided credentials.))',
    );
    const invalid = await new TelnyxDialer(options).dial({ ...request, to: REFUSED_TO }).catch((e: Error) => e);
    expect((invalid as Error).message).toMatch(/^Telnyx refused the call \(HTTP 422, code 10016: /);
    standIn.hold('+14155552676');
    const slow = new TelnyxDialer({ ...options, timeoutMs: 100 });
    const timedOut = await slow.dial({ ...request, to: '+14155552676' }).catch((e: Error) => e);
    expect((timedOut as Error).message).toBe('Telnyx request for the call failed: no answer within 100 ms');
    standIn.release('+14155552676');
    for (const error of [refused, invalid, timedOut]) expect((error as Error).message).not.toContain(TELNYX_API_KEY);
  });
});

describe('DIALER=telnyx configuration', () => {
  it('needs its key, public key, connection and public address, and a public key of 32 bytes', () => {
    expect(() => loadConfig({ DIALER: 'telnyx' })).toThrow(
      /TELNYX_API_KEY: is required when DIALER=telnyx[\s\S]*TELNYX_PUBLIC_KEY: is required[\s\S]*TELNYX_CONNECTION_ID: is required[\s\S]*PUBLIC_BASE_URL: is required/,
    );
    const env = telnyxEnv('https://api.telnyx.com', standIn.keys.publicKey);
    expect(loadConfig(env)).toMatchObject({ DIALER: 'telnyx', TELNYX_API_BASE_URL: 'https://api.telnyx.com' });
    expect(() => loadConfig({ ...env, TELNYX_PUBLIC_KEY: Buffer.alloc(31).toString('base64') })).toThrow(
      /TELNYX_PUBLIC_KEY/,
    );
    expect(() => loadConfig({ ...env, TELNYX_API_BASE_URL: 'not a url' })).toThrow(
      /TELNYX_API_BASE_URL: is not a valid URL/,
    );
  });
});

describe('mapTelnyxHangup', () => {
  it.each([
    ['normal_clearing', true, null, { kind: 'completed' }],
    ['normal_clearing', false, null, { kind: 'completed' }],
    ['time_limit', true, null, { kind: 'completed' }],
    ['normal_clearing', true, 'machine', { kind: 'failed', reason: 'voicemail' }],
    ['normal_clearing', true, 'human', { kind: 'completed' }],
    ['unspecified', true, null, { kind: 'completed' }],
    ['user_busy', false, null, { kind: 'failed', reason: 'busy' }],
    ['timeout', false, null, { kind: 'failed', reason: 'no_answer' }],
    ['no_answer', false, null, { kind: 'failed', reason: 'no_answer' }],
    ['call_rejected', false, null, { kind: 'failed', reason: 'rejected' }],
    ['originator_cancel', false, null, { kind: 'failed', reason: 'canceled' }],
    ['not_found', false, null, { kind: 'failed', reason: 'provider_error' }],
    ['unspecified', false, null, { kind: 'failed', reason: 'provider_error' }],
    ['', false, null, { kind: 'failed', reason: 'provider_error' }],
  ] as const)('%s (answered %s, by %s) -> %j', (cause, answered, by, expected) => {
    expect(mapTelnyxHangup(cause, answered, by)).toEqual(expected);
  });

  it.each([
    ['human', 'human'],
    ['human_residence', 'human'],
    ['human_business', 'human'],
    ['machine', 'machine'],
    ['fax_detected', 'machine'],
    ['silence', 'unknown'],
    ['not_sure', 'unknown'],
    ['Machine', 'unknown'],
    [undefined, 'unknown'],
  ])('the verdict %j is %s', (result, expected) => {
    expect(answeredByOfTelnyx(result)).toBe(expected);
  });

  it('client_state reads back only as the dial wrote it', () => {
    const state = { callId: 'c', attempt: 3, voicemail: 'leave_message' as const };
    expect(decodeClientState(encodeClientState(state))).toEqual(state);
    for (const bad of [
      undefined,
      '',
      'bm90IGpzb24=',
      Buffer.from('{"c":"c","a":0,"v":"off"}').toString('base64'),
      Buffer.from('{"c":"c","a":1,"v":"loud"}').toString('base64'),
      Buffer.from('{"c":1,"a":1,"v":"off"}').toString('base64'),
      Buffer.from('null').toString('base64'),
    ])
      expect(decodeClientState(bad)).toBeNull();
  });
});
