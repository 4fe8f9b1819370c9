// The Twilio dialer end to end against a local stand-in of Twilio's REST API: the create-call request, status
// callbacks signed by Twilio's SDK (in order, duplicated, late, racing the dialer, forged), the TwiML handed to the
// agent, and refused dials. Voicemail detection: test/dispatch/voicemail.test.ts.
import { createHmac } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { Writable } from 'node:stream';
import pino, { type LoggerOptions } from 'pino';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { mapTwilioStatus, TwilioDialer } from '../../src/dispatch/twilio-dialer.js';
import { loggerOptions } from '../../src/logger.js';
import { isValidTwilioSignature, streamTwiml, twilioSignature } from '../../src/routes/telephony/twilio.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import {
  ACCOUNT_SID,
  AGENT_PHONE,
  PUBLIC,
  REFUSED_TO,
  signLikeTwilio,
  TOKEN,
  TwilioStandIn,
  twilioCallback,
  twilioEnv,
} from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';

const standIn = new TwilioStandIn();
let apiBaseUrl: string;
let app: App;
let key: string;
const env = () => twilioEnv(apiBaseUrl);

beforeAll(async () => {
  apiBaseUrl = await standIn.start();
  app = (await buildTestApp({ env: env() })).app;
  key = (await createTenant(app.storage)).key;
});

/** Triggers a call and waits until Twilio was asked to place it. */
async function place(
  phone = '+14155552671',
  extra: Record<string, string> = {},
  options: { waitForSid?: boolean } = {},
) {
  const callId = callIdOf(await trigger(app, key, { phone_number: phone, ...extra }));
  const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
  if (options.waitForSid !== false)
    await waitFor(
      () => prismaOf(app).call.findUnique({ where: { id: callId } }),
      (c) => c?.providerCallId === create!.sid,
    );
  return { callId, sid: create!.sid, create: create! };
}

function callback(
  kind: 'status' | 'twiml',
  callId: string,
  params: Record<string, string>,
  signature?: string | null,
  headers: Record<string, string> = {},
) {
  return twilioCallback(app, kind, callId, params, { signature, headers });
}

const statusParams = (sid: string, status: string, more: Record<string, string> = {}) => ({
  AccountSid: ACCOUNT_SID,
  ApiVersion: '2010-04-01',
  CallSid: sid,
  CallStatus: status,
  CallbackSource: 'call-progress-events',
  Called: '+14155552671',
  Caller: AGENT_PHONE,
  Direction: 'outbound-api',
  From: AGENT_PHONE,
  To: '+14155552671',
  Timestamp: new Date().toUTCString(),
  ...more,
});

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

describe('Twilio dialer', () => {
  it('asks Twilio to place the call with callbacks, then follows its status callbacks; duplicates and late ones change nothing', async () => {
    const { callId, sid, create } = await place();
    expect(Object.fromEntries([...create.form].filter(([k]) => k !== 'StatusCallbackEvent'))).toEqual({
      To: '+14155552671',
      From: AGENT_PHONE,
      Url: `${PUBLIC}/telephony/twilio/twiml?call_id=${callId}`,
      Method: 'POST',
      StatusCallback: `${PUBLIC}/telephony/twilio/status?call_id=${callId}`,
      StatusCallbackMethod: 'POST',
    });
    expect(create.form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    expect(await snapshot(callId)).toMatchObject({ status: 'dialing', providerCallId: sid });

    for (const status of ['initiated', 'ringing'])
      expect((await callback('status', callId, statusParams(sid, status))).statusCode).toBe(204);
    const dialing = await snapshot(callId);
    expect(dialing).toMatchObject({ status: 'dialing', answeredAt: null });

    const answered = await callback('status', callId, statusParams(sid, 'in-progress'));
    expect([answered.statusCode, answered.body]).toEqual([204, '']);
    const inProgress = await snapshot(callId);
    expect(inProgress).toMatchObject({ status: 'in_progress', events: dialing.events + 1 });
    expect(inProgress.answeredAt).toBeInstanceOf(Date);
    expect((await callback('status', callId, statusParams(sid, 'in-progress'))).statusCode).toBe(204);
    expect(await snapshot(callId)).toEqual(inProgress);

    expect((await callback('status', callId, statusParams(sid, 'completed', { CallDuration: '42' }))).statusCode).toBe(
      204,
    );
    const completed = await snapshot(callId);
    expect(completed).toMatchObject({
      status: 'completed',
      durationSeconds: 42,
      failureReason: null,
      events: inProgress.events + 1,
    });
    expect((await callback('status', callId, statusParams(sid, 'ringing'))).statusCode).toBe(204);
    expect((await callback('status', callId, statusParams(sid, 'busy'))).statusCode).toBe(204);
    expect(await snapshot(callId)).toEqual(completed);
    const sources = await prismaOf(app).callEvent.findMany({
      where: { callId },
      orderBy: { occurredAt: 'asc' },
      select: { toStatus: true, source: true },
    });
    expect(sources.filter((e) => e.source === 'provider').map((e) => e.toStatus)).toEqual(['in_progress', 'completed']);
  });

  it('busy and no-answer fail the call with that reason', async () => {
    for (const [status, reason] of [
      ['busy', 'busy'],
      ['no-answer', 'no_answer'],
    ] as const) {
      const { callId, sid } = await place();
      expect((await callback('status', callId, statusParams(sid, status))).statusCode).toBe(204);
      expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: reason, answeredAt: null });
    }
  });

  it('refuses missing, forged, replayed and tampered signatures with 403 and changes nothing; the Host header plays no part', async () => {
    const { callId, sid } = await place();
    const before = await snapshot(callId);
    const other = await place();
    const busy = statusParams(sid, 'busy');
    const forged = [
      callback('status', callId, busy, null),
      callback(
        'status',
        callId,
        busy,
        signLikeTwilio('wrong-token', `${PUBLIC}/telephony/twilio/status?call_id=${callId}`, busy),
      ),
      // Signed for another call's URL, or for other parameters.
      callback(
        'status',
        callId,
        busy,
        signLikeTwilio(TOKEN, `${PUBLIC}/telephony/twilio/status?call_id=${other.callId}`, busy),
      ),
      callback(
        'status',
        callId,
        busy,
        signLikeTwilio(TOKEN, `${PUBLIC}/telephony/twilio/status?call_id=${callId}`, statusParams(sid, 'ringing')),
      ),
      callback(
        'status',
        callId,
        busy,
        signLikeTwilio(TOKEN, `http://localhost/telephony/twilio/status?call_id=${callId}`, busy),
        { host: 'localhost' },
      ),
    ];
    for (const response of await Promise.all(forged)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ success: false, error: 'Invalid Twilio signature' });
    }
    expect(await snapshot(callId)).toEqual(before);
    expect(
      (await callback('status', callId, busy, undefined, { host: 'internal:8443', 'x-forwarded-host': 'evil.example' }))
        .statusCode,
    ).toBe(204);
    expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: 'busy' });
  });

  it('unknown calls and calls whose sid disagrees with CallSid are 404', async () => {
    const { callId, sid } = await place();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', callId]) {
      const response = await callback('status', id, statusParams(id === callId ? `CA${'f'.repeat(32)}` : sid, 'busy'));
      expect([response.statusCode, response.json()]).toEqual([404, { success: false, error: 'Call not found' }]);
    }
    expect(await snapshot(callId)).toMatchObject({ status: 'dialing' });
  });

  it("a callback while the database is down is answered 503 in the envelope, not as one of the routes' own HTTP errors", async () => {
    const down = (
      await buildTestApp({
        databaseUrl: 'postgresql://postgres@127.0.0.1:1/nowhere',
        env: { ...env(), DISPATCH_ENABLED: 'false' },
      })
    ).app;
    const path = '/telephony/twilio/status?call_id=00000000-0000-4000-8000-000000000000';
    const params = statusParams(`CA${'0'.repeat(32)}`, 'busy');
    const response = await down.inject({
      method: 'POST',
      url: path,
      payload: new URLSearchParams(params).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signLikeTwilio(TOKEN, `${PUBLIC}${path}`, params),
      },
    });
    expect([response.statusCode, response.json()]).toEqual([
      503,
      { success: false, error: 'Service temporarily unavailable' },
    ]);
  });

  it('a callback that beats the dialer records the sid with its update; the dialer then finds the call settled', async () => {
    const to = '+14155552673';
    standIn.hold(to);
    const { callId, sid } = await place(to, {}, { waitForSid: false });
    expect(await snapshot(callId)).toMatchObject({ status: 'dialing', providerCallId: null });
    expect((await callback('status', callId, statusParams(sid, 'no-answer'))).statusCode).toBe(204);
    expect(await snapshot(callId)).toMatchObject({ status: 'failed', failureReason: 'no_answer', providerCallId: sid });
    standIn.release(to);
    // The dialer now gets the sid and records it: settle() waits for that dial's work to end (a fixed wait was a
    // guess at how long that takes under load).
    await app.dispatcher!.settle();
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    expect(call).toMatchObject({
      status: 'failed',
      failureReason: 'no_answer',
      providerCallId: sid,
      dialAttempts: 1,
      leaseOwner: null,
    });
  });

  it('TwiML connects the answered call to the agent stream with escaped parameters, and is signed too', async () => {
    const name = `Ada & "Bob" <x>`;
    const { callId, sid } = await place('+14155552672', { name, email: "o'brien&co@example.com" });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    const params = statusParams(sid, 'in-progress');
    expect((await callback('twiml', callId, params, null)).statusCode).toBe(403);
    expect(
      (
        await callback(
          'twiml',
          callId,
          params,
          signLikeTwilio('wrong-token', `${PUBLIC}/telephony/twilio/twiml?call_id=${callId}`, params),
        )
      ).statusCode,
    ).toBe(403);

    const response = await callback('twiml', callId, params);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/xml/);
    const token = /name="context_token" value="([^"]+)"/.exec(response.body)![1]!;
    expect(await app.contextTokens.verify(token)).toMatchObject({ callId, attempt: 1 });
    expect(response.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://agent.example.test/stream">' +
        `<Parameter name="call_id" value="${callId}"/><Parameter name="agent_id" value="${call.agentId}"/>` +
        `<Parameter name="account_id" value="${call.accountId}"/><Parameter name="from_number" value="${AGENT_PHONE}"/>` +
        '<Parameter name="to_number" value="+14155552672"/><Parameter name="direction" value="outbound-api"/>' +
        '<Parameter name="attempt" value="1"/>' +
        '<Parameter name="name" value="Ada &amp; &quot;Bob&quot; &lt;x&gt;"/><Parameter name="email" value="o&apos;brien&amp;co@example.com"/>' +
        `<Parameter name="context_token" value="${token}"/>` +
        '</Stream></Connect></Response>',
    );

    const anonymous = await place('+14155552674');
    const bare = await callback('twiml', anonymous.callId, statusParams(anonymous.sid, 'in-progress'));
    expect(bare.body).toContain(`<Parameter name="call_id" value="${anonymous.callId}"/>`);
    expect(bare.body).toMatch(
      /<Parameter name="attempt" value="1"\/><Parameter name="context_token" value="oct1\.[^"]+"\/><\/Stream>/,
    );
    expect(bare.body).not.toMatch(/name="(name|email)"/);
    // A call that is already over is hung up rather than handed to the agent.
    await callback('status', anonymous.callId, statusParams(anonymous.sid, 'canceled'));
    expect((await callback('twiml', anonymous.callId, statusParams(anonymous.sid, 'in-progress'))).body).toContain(
      '<Hangup/>',
    );
  });

  it("a dial Twilio refuses fails the call with provider_error, and the log names Twilio's error but never the token", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const { url } = await freshDatabase();
    const config = loadConfig({ ...env(), LOG_LEVEL: 'info', DATA_DIR: '.data/test', DATABASE_URL: url });
    const logged = await buildApp({
      config,
      databaseUrl: url,
      logger: pino(loggerOptions('info') as LoggerOptions, sink),
    });
    afterAll(() => logged.close());
    const tenant = await createTenant(logged.storage);
    const callId = callIdOf(await trigger(logged, tenant.key, { phone_number: REFUSED_TO }));
    const call = await waitFor(
      () => prismaOf(logged).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.status === 'failed',
    );
    expect(call).toMatchObject({ failureReason: 'provider_error', providerCallId: null, dialAttempts: 1 });
    // Logged once the failure is committed: a busy machine can let the row be read first.
    const log = await waitFor(
      () => lines.join(''),
      (text) => text.includes('dial failed'),
    );
    expect(log).toContain("code 21211: The 'To' number is not a valid phone number.");
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(Buffer.from(`${ACCOUNT_SID}:${TOKEN}`).toString('base64'));
  });

  it('the dialer reports rejected credentials and timeouts without the token', async () => {
    const wrong = new TwilioDialer({
      accountSid: ACCOUNT_SID,
      authToken: 'not-the-token',
      apiBaseUrl,
      publicBaseUrl: PUBLIC,
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
    const refused = await wrong.dial(request).catch((e: Error) => e);
    expect((refused as Error).message).toBe('Twilio refused the call (HTTP 401, code 20003: Authenticate)');
    standIn.hold('+14155552676');
    const slow = new TwilioDialer({
      accountSid: ACCOUNT_SID,
      authToken: TOKEN,
      apiBaseUrl,
      publicBaseUrl: PUBLIC,
      timeoutMs: 100,
    });
    const timedOut = await slow.dial({ ...request, to: '+14155552676' }).catch((e: Error) => e);
    expect((timedOut as Error).message).toBe('Twilio call create failed: no answer within 100 ms');
    standIn.release('+14155552676');
  });
});

describe('mapTwilioStatus', () => {
  it.each([
    ['queued', undefined, null],
    ['initiated', undefined, null],
    ['ringing', undefined, null],
    ['in-progress', undefined, { kind: 'answered' }],
    ['completed', '42', { kind: 'completed', durationSeconds: 42 }],
    ['completed', undefined, { kind: 'completed' }],
    ['completed', 'abc', { kind: 'completed' }],
    ['busy', undefined, { kind: 'failed', reason: 'busy' }],
    ['no-answer', undefined, { kind: 'failed', reason: 'no_answer' }],
    ['canceled', undefined, { kind: 'failed', reason: 'canceled' }],
    ['failed', undefined, { kind: 'failed', reason: 'provider_error' }],
    ['answered', undefined, null],
    ['', undefined, null],
  ])('%s (CallDuration %s) -> %j', (status, duration, expected) => {
    expect(mapTwilioStatus(status, duration)).toEqual(expected);
  });
});

describe('X-Twilio-Signature', () => {
  // The worked example of Twilio's request-validation docs (twilio-php "Validate Incoming Requests").
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  };

  it("matches Twilio's documented example", () => {
    expect(twilioSignature('12345', url, params)).toBe('RSOYDt4T1cUTdK1PDd93/VVr8B8=');
    expect(isValidTwilioSignature('12345', 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, params)).toBe(true);
  });

  it("agrees with Twilio's SDK (which signs these tests' callbacks) both ways", () => {
    const amd = { ...params, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '4120' };
    const amdUrl = `${PUBLIC}/telephony/twilio/amd?call_id=c&voicemail=leave_message`;
    expect(twilioSignature(TOKEN, amdUrl, amd)).toBe(signLikeTwilio(TOKEN, amdUrl, amd));
    expect(twilio.validateRequest(TOKEN, twilioSignature(TOKEN, amdUrl, amd), amdUrl, amd)).toBe(true);
  });

  it('rejects a missing signature, another token, URL or parameter, and compares repeated parameters as Twilio does', () => {
    expect(isValidTwilioSignature('12345', undefined, url, params)).toBe(false);
    expect(isValidTwilioSignature('12346', 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, params)).toBe(false);
    expect(isValidTwilioSignature('12345', 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', `${url}&x=1`, params)).toBe(false);
    expect(isValidTwilioSignature('12345', 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, { ...params, Digits: '1235' })).toBe(
      false,
    );
    expect(twilioSignature('t', 'u', { b: ['2', '1'], a: 'x' })).toBe(
      createHmac('sha1', 't').update('uaxb1b2').digest('base64'),
    );
  });

  it('a Parameter value read back by an XML parser is exactly the name given: line breaks, tabs, quotes, markup, Unicode', () => {
    const parameterValues = (twiml: string) => {
      const document = new DOMParser({
        onError: (level, message) => {
          throw new Error(`${level}: ${message}`);
        },
      }).parseFromString(twiml, 'text/xml');
      const parameters = document.getElementsByTagName('Parameter');
      return Object.fromEntries(
        Array.from({ length: parameters.length }, (_, i) => [
          String(parameters.item(i)!.getAttribute('name')),
          parameters.item(i)!.getAttribute('value'),
        ]),
      );
    };
    for (const name of [
      'co\nline2\tTab',
      'a\r\nb',
      '\t lead and trail \n',
      `"quoted" 'single'`,
      '<b>&amp; &</b>',
      'Zoë 😀 李 \u00a0nbsp',
      'x\u2028y\u0085z',
    ]) {
      const twiml = streamTwiml('wss://a.test/s?x=1&y=2', [
        { name: 'agent_id', value: 'a' },
        { name: 'call_id', value: 'c' },
        { name: 'name', value: name },
        { name: 'email', value: `e\n${name}@example.com` },
      ]);
      expect(parameterValues(twiml), JSON.stringify(name)).toEqual({
        agent_id: 'a',
        call_id: 'c',
        name,
        email: `e\n${name}@example.com`,
      });
    }
  });

  it('escapes every parameter of the TwiML', () => {
    const twiml = streamTwiml('wss://a.test/s?x=1&y=2', [{ name: 'name', value: `<'&">` }]);
    expect(twiml).toContain('url="wss://a.test/s?x=1&amp;y=2"');
    expect(twiml).toContain('<Parameter name="name" value="&lt;&apos;&amp;&quot;&gt;"/>');
  });
});
