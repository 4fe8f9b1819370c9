// The SignalWire dialer (issue 50.2) against a local stand-in of a space's Compatibility API: the dial to the space's
// LaML Calls resource with the project's Basic auth, the call's lifecycle from signed callbacks (answered, completed,
// busy, no answer, failed, busy then answered on retry), answering-machine detection, the stream and SIP hand-offs,
// callbacks checked by @signalwire/compatibility-api with the signing key, and the configuration it needs.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { App } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { SignalWireDialer } from '../../src/dispatch/signalwire-dialer.js';
import { signalWireSdk } from '../../src/routes/telephony/signalwire-sdk.js';
import type { VoicemailPolicy } from '../../schemas/vocabulary.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import {
  AGENT_PHONE,
  PROJECT_ID,
  PUBLIC,
  REFUSED_TO,
  SIGNALWIRE_TOKEN,
  SIGNING_KEY,
  SignalWireStandIn,
  signalWireCallback,
  signalWireEnv,
  signLikeSignalWire,
  SPACE_URL,
  STREAM,
} from '../helpers/signalwire-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const TO = '+14155552671';
const standIn = new SignalWireStandIn();
/** The agent's runtime: a WebSocket server the stand-in's media streams reach (STREAM, on this machine). */
const runtime = new WebSocketServer({ port: 0, host: '127.0.0.1' });
let apiBaseUrl: string;
let app: App;
let tenant: Tenant;

beforeAll(async () => {
  apiBaseUrl = await standIn.start();
  app = (await buildTestApp({ env: signalWireEnv(apiBaseUrl) })).app;
  tenant = await createTenant(app.storage);
  await app.listen({ port: 0, host: '127.0.0.1' });
  // What SignalWire reaches over the internet, here on this machine: the service's PUBLIC_BASE_URL and the stream.
  standIn.reach(PUBLIC, `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  standIn.reach(STREAM, `ws://127.0.0.1:${(runtime.address() as AddressInfo).port}/stream`);
});
afterAll(async () => {
  for (const client of runtime.clients) client.terminate();
  await new Promise((resolve) => runtime.close(resolve));
});

/** Triggers a call for `who` and waits until the space was asked to place it and its sid is recorded. */
async function place(who: Tenant = tenant, body: Record<string, string> = {}) {
  const callId = callIdOf(await trigger(app, who.key, { phone_number: TO, ...body }));
  const create = (await waitFor(() => standIn.createFor(callId), Boolean))!;
  await waitFor(
    () => row(callId),
    (c) => c.providerCallId === create.sid,
  );
  return { callId, sid: create.sid, create };
}

const row = (callId: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });

/** A tenant whose agent is set as given (directly: some of these pairs the forms refuse). */
async function tenantWith(data: Parameters<typeof forceAgent>[2]): Promise<Tenant> {
  const made = await createTenant(app.storage);
  await forceAgent(prismaOf(app), made.agentId, data);
  return made;
}

describe('SignalWire dialer', () => {
  it("dials through the space's LaML Calls resource with the project's Basic auth and SignalWire's callback URLs", async () => {
    const { callId, sid, create } = await place();
    expect(create.path).toBe(`/api/laml/2010-04-01/Accounts/${PROJECT_ID}/Calls.json`);
    expect(create.authorization).toBe(`Basic ${Buffer.from(`${PROJECT_ID}:${SIGNALWIRE_TOKEN}`).toString('base64')}`);
    expect(Object.fromEntries([...create.form].filter(([k]) => k !== 'StatusCallbackEvent'))).toEqual({
      To: TO,
      From: AGENT_PHONE,
      Url: `${PUBLIC}/telephony/signalwire/twiml?call_id=${callId}`,
      Method: 'POST',
      StatusCallback: `${PUBLIC}/telephony/signalwire/status?call_id=${callId}`,
      StatusCallbackMethod: 'POST',
    });
    expect(create.form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    expect(await row(callId)).toMatchObject({ status: 'dialing', attempt: 1 });
  });

  it('answered: the stream hand-off carries its parameters; completed with its duration', async () => {
    const { callId, sid } = await place(tenant, { name: 'Ada & "Bob"', email: 'ada@example.com' });
    const call = await row(callId);
    const answered = await standIn.answer(sid);
    expect(answered.twiml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="wss:/);
    expect(answered.stream!.customParameters).toEqual({
      call_id: callId,
      agent_id: call.agentId,
      account_id: call.accountId,
      from_number: AGENT_PHONE,
      to_number: TO,
      direction: 'outbound-api',
      attempt: '1',
      name: 'Ada & "Bob"',
      email: 'ada@example.com',
      context_token: expect.stringMatching(/^oct1\./) as string,
    });
    expect(await app.contextTokens.verify(answered.stream!.customParameters.context_token!)).toMatchObject({
      callId,
      attempt: 1,
    });
    expect(await row(callId)).toMatchObject({ status: 'in_progress', failureReason: null });
    await standIn.complete(sid, { duration: 42 });
    expect(await row(callId)).toMatchObject({ status: 'completed', durationSeconds: 42, failureReason: null });
    const sources = await prismaOf(app).callEvent.findMany({
      where: { callId },
      orderBy: { occurredAt: 'asc' },
      select: { toStatus: true, source: true },
    });
    expect(sources.filter((e) => e.source === 'provider').map((e) => e.toStatus)).toEqual(['in_progress', 'completed']);
  });

  it('busy, no answer and failed fail the call with busy, no_answer and provider_error', async () => {
    for (const [end, reason] of [
      ['busy', 'busy'],
      ['noAnswer', 'no_answer'],
      ['fail', 'provider_error'],
    ] as const) {
      const { callId, sid } = await place();
      await standIn[end](sid);
      expect(await row(callId), end).toMatchObject({ status: 'failed', failureReason: reason, answeredAt: null });
    }
  });

  it('busy, then answered on the retry: the second attempt has its own callbacks and completes', async () => {
    const retrying = await tenantWith({ maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [0] });
    const first = await place(retrying);
    await standIn.busy(first.sid);
    const second = (await waitFor(
      () => standIn.creates.find((c) => c.form.get('Url')!.endsWith(`call_id=${first.callId}&attempt=2`)),
      Boolean,
    ))!;
    expect(second.form.get('StatusCallback')).toBe(
      `${PUBLIC}/telephony/signalwire/status?call_id=${first.callId}&attempt=2`,
    );
    await waitFor(
      () => row(first.callId),
      (c) => c.providerCallId === second.sid,
    );
    const answered = await standIn.answer(second.sid);
    expect(answered.stream!.customParameters.attempt).toBe('2');
    await standIn.complete(second.sid, { duration: 5 });
    const call = await row(first.callId);
    expect(call).toMatchObject({ status: 'completed', attempt: 2, durationSeconds: 5 });
    expect((call.attemptOutcomes as { outcome: string }[]).map((o) => o.outcome)).toEqual(['busy', 'completed']);
  });

  describe('answering-machine detection', () => {
    const MESSAGE = 'Hi {{name}}, this is Acme Dental. Please call us back.';
    const detecting = (voicemail: VoicemailPolicy) =>
      tenantWith({ voicemail, voicemailMessage: voicemail === 'leave_message' ? MESSAGE : null });

    it('leave_message: the machine hears the message (the live call updated at the space), then the call fails with reason voicemail', async () => {
      const { callId, sid, create } = await place(await detecting('leave_message'), { name: 'Ada' });
      expect({
        MachineDetection: create.form.get('MachineDetection'),
        AsyncAmd: create.form.get('AsyncAmd'),
        AsyncAmdStatusCallback: create.form.get('AsyncAmdStatusCallback'),
      }).toEqual({
        MachineDetection: 'DetectMessageEnd',
        AsyncAmd: 'true',
        AsyncAmdStatusCallback: `${PUBLIC}/telephony/signalwire/amd?call_id=${callId}&voicemail=leave_message`,
      });
      await standIn.answer(sid);
      await standIn.machine(sid);
      const updates = standIn.updates.filter((u) => u.sid === sid);
      expect(updates).toHaveLength(1);
      expect(updates[0]!.form.get('Twiml')).toContain('<Say>Hi Ada, this is Acme Dental. Please call us back.</Say>');
      expect(await row(callId)).toMatchObject({
        status: 'failed',
        failureReason: 'voicemail',
        answeredBy: 'machine',
        voicemailLeft: true,
      });
    });

    it('hang_up: the machine is hung up on, and the call fails with reason voicemail, no message left', async () => {
      const { callId, sid } = await place(await detecting('hang_up'));
      await standIn.answer(sid);
      await standIn.machine(sid, { answeredBy: 'machine_start' });
      expect(standIn.updates.filter((u) => u.sid === sid).map((u) => Object.fromEntries(u.form))).toEqual([
        { Status: 'completed' },
      ]);
      expect(await row(callId)).toMatchObject({
        status: 'failed',
        failureReason: 'voicemail',
        answeredBy: 'machine',
        voicemailLeft: false,
      });
    });

    it('a person goes on with the agent and completes', async () => {
      const { callId, sid } = await place(await detecting('leave_message'));
      await standIn.answer(sid);
      await standIn.machine(sid, { answeredBy: 'human' });
      expect(standIn.updates.filter((u) => u.sid === sid)).toEqual([]);
      await standIn.complete(sid);
      expect(await row(callId)).toMatchObject({ status: 'completed', answeredBy: 'human', failureReason: null });
    });
  });

  it('the SIP hand-off: <Dial><Sip> with the values as headers', async () => {
    const sip = await tenantWith({ handoff: 'sip', sipUri: 'sip:agent@sip.example.test' });
    const { callId, sid } = await place(sip);
    const answered = await standIn.answer(sid);
    expect(answered.twiml).toMatch(/<Response><Dial><Sip>sip:agent@sip\.example\.test\?X-Call-Id=/);
    expect(answered.sip).toContain(`X-Call-Id=${callId}&X-Agent-Id=`);
    expect(answered.stream).toBeNull();
    await standIn.complete(sid, { duration: 3 });
    expect(await row(callId)).toMatchObject({ status: 'completed', durationSeconds: 3 });
  });

  it('refuses unsigned callbacks and those signed with another key (the API token), for another URL or other values: 403, nothing changes', async () => {
    const { callId, sid } = await place();
    const before = await row(callId);
    const busy = { AccountSid: PROJECT_ID, CallSid: sid, CallStatus: 'busy', Direction: 'outbound-api', To: TO };
    const url = `${PUBLIC}/telephony/signalwire/status?call_id=${callId}`;
    const refused = [
      signalWireCallback(app, 'status', callId, busy, { signature: null }),
      signalWireCallback(app, 'status', callId, busy, { signature: signLikeSignalWire(SIGNALWIRE_TOKEN, url, busy) }),
      signalWireCallback(app, 'status', callId, busy, { signature: signLikeSignalWire('PSK_wrong', url, busy) }),
      signalWireCallback(app, 'status', callId, busy, {
        signature: signLikeSignalWire(SIGNING_KEY, `${url}&attempt=2`, busy),
      }),
      signalWireCallback(app, 'status', callId, busy, {
        signature: signLikeSignalWire(SIGNING_KEY, url, { ...busy, CallStatus: 'ringing' }),
      }),
      signalWireCallback(app, 'twiml', callId, { CallSid: sid, CallStatus: 'in-progress' }, { signature: null }),
      signalWireCallback(app, 'amd', callId, { CallSid: sid, AnsweredBy: 'machine_start' }, { signature: null }),
    ];
    for (const response of await Promise.all(refused)) {
      expect([response.statusCode, response.json()]).toEqual([
        403,
        { success: false, error: 'Invalid SignalWire signature' },
      ]);
    }
    expect(await row(callId)).toEqual(before);
    // Twilio's routes are there (an account may dial through Twilio) but refuse a SignalWire call's callbacks;
    // SignalWire's signed callback moves the call, under either header name.
    expect((await app.inject({ method: 'POST', url: `/telephony/twilio/status?call_id=${callId}` })).statusCode).toBe(
      403,
    );
    const signed = await signalWireCallback(app, 'status', callId, busy, {
      signature: null,
      headers: { 'x-twilio-signature': signLikeSignalWire(SIGNING_KEY, url, busy) },
    });
    expect(signed.statusCode).toBe(204);
    expect(await row(callId)).toMatchObject({ status: 'failed', failureReason: 'busy' });
  });

  it("the stand-in signs as the SDK checks: @signalwire/compatibility-api's validateRequest accepts it", () => {
    const params = { CallSid: 'c', CallStatus: 'completed', AnsweredBy: 'machine_end_beep', To: TO };
    const url = `${PUBLIC}/telephony/signalwire/amd?call_id=c&voicemail=leave_message`;
    const signature = signLikeSignalWire(SIGNING_KEY, url, params);
    const { RestClient } = signalWireSdk();
    expect(RestClient.validateRequest(SIGNING_KEY, signature, url, params)).toBe(true);
    expect(RestClient.validateRequest(SIGNALWIRE_TOKEN, signature, url, params)).toBe(false);
  });

  it("a refused dial fails the call with provider_error; the dialer's errors name SignalWire; the space is the API", async () => {
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: REFUSED_TO }));
    expect(
      await waitFor(
        () => row(callId),
        (c) => c.status === 'failed',
      ),
    ).toMatchObject({
      failureReason: 'provider_error',
      providerCallId: null,
    });
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
    const options = { spaceUrl: SPACE_URL, projectId: PROJECT_ID, publicBaseUrl: PUBLIC };
    const wrong = new SignalWireDialer({ ...options, token: 'not-the-token', apiBaseUrl });
    const refused = (await wrong.dial(request).catch((e: Error) => e)) as Error;
    expect(refused.message).toBe('SignalWire refused the call (HTTP 401, code 20003: Authenticate)');
    expect(wrong.kind).toBe('signalwire');
    // Without an override the space itself is the API (here the stand-in stands at the space's address).
    const direct = new SignalWireDialer({ ...options, spaceUrl: apiBaseUrl, token: SIGNALWIRE_TOKEN });
    const { providerCallId } = await direct.dial({ ...request, to: '+14155552677' });
    expect(standIn.createOf(providerCallId).path).toBe(`/api/laml/2010-04-01/Accounts/${PROJECT_ID}/Calls.json`);
  });
});

describe('SignalWire configuration', () => {
  const base = { DATA_DIR: '.data/test', PUBLIC_BASE_URL: PUBLIC, AGENT_STREAM_URL: STREAM };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };

  it('DIALER=signalwire needs the space, the project, a token and the signing key', () => {
    const message = problems({ DIALER: 'signalwire', PUBLIC_BASE_URL: '', AGENT_STREAM_URL: '' })!;
    for (const name of [
      'SIGNALWIRE_SPACE_URL',
      'SIGNALWIRE_PROJECT_ID',
      'SIGNALWIRE_TOKEN',
      'SIGNALWIRE_SIGNING_KEY',
      'PUBLIC_BASE_URL',
      'AGENT_STREAM_URL',
    ])
      expect(message).toContain(`${name}: is required when DIALER=signalwire`);
    // Without the override the REST calls go to the space.
    const config = loadConfig({ ...base, ...signalWireEnv('http://127.0.0.1:1'), SIGNALWIRE_API_BASE_URL: '' });
    expect([config.DIALER, config.SIGNALWIRE_SPACE_URL, config.SIGNALWIRE_API_BASE_URL]).toEqual([
      'signalwire',
      SPACE_URL,
      undefined,
    ]);
  });

  it("the space URL must be a space's https address; the project ID a UUID; the API override a URL", () => {
    const env = signalWireEnv('http://127.0.0.1:1');
    for (const space of ['example.signalwire.com', 'http://example.signalwire.com', 'https://example.evil.com'])
      expect(problems({ ...env, SIGNALWIRE_SPACE_URL: space })).toContain(
        "SIGNALWIRE_SPACE_URL: must be the space's address, https://<space>.signalwire.com",
      );
    expect(problems({ ...env, SIGNALWIRE_SPACE_URL: 'https://My-Space.signalwire.com/' })).toBeNull();
    expect(problems({ ...env, SIGNALWIRE_PROJECT_ID: 'AC123' })).toContain('SIGNALWIRE_PROJECT_ID: must match');
    expect(problems({ ...env, SIGNALWIRE_API_BASE_URL: 'not a url' })).toContain(
      'SIGNALWIRE_API_BASE_URL: is not a valid URL',
    );
  });
});
