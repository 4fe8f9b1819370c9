// Voicemail detection (issue 23.2): Twilio's asynchronous answering-machine detection against the local stand-in
// (the dial's parameters, the signed verdict, the live call redirected to the message or hung up, the end as failed
// with reason voicemail), the simulated dialer's voicemail number, and the message as spoken.
import { DOMParser } from '@xmldom/xmldom';
import twilio from 'twilio';
import TwiMLVoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { voicemailText } from '../../src/domain/voicemail.js';
import { SIMULATED_VOICEMAIL } from '../../src/dispatch/simulated-dialer.js';
import { answeredByOf, mapTwilioStatus } from '../../src/dispatch/twilio-dialer.js';
import { voicemailTwiml } from '../../src/routes/telephony/twilio.js';
import type { VoicemailPolicy } from '../../schemas/vocabulary.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import {
  ACCOUNT_SID,
  AGENT_PHONE,
  PUBLIC,
  signLikeTwilio,
  TOKEN,
  TwilioStandIn,
  twilioCallback,
  twilioEnv,
} from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';
import { forceAgent, insertCallRow } from '../helpers/seed.js';

const MESSAGE = 'Hi {{name}}, this is Acme Dental about your appointment. Please call us back.';

/** A tenant whose agent's voicemail detection is set as given (directly: the forms refuse some of these pairs). */
async function tenantWith(app: App, voicemail: VoicemailPolicy, message: string | null = MESSAGE): Promise<Tenant> {
  const tenant = await createTenant(app.storage);
  await forceAgent(prismaOf(app), tenant.agentId, { voicemail, voicemailMessage: message });
  // An endpoint, so that every event's delivery (its frozen payload) is written; nothing is sent in these tests.
  await setWebhook(app.storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: app.now() });
  return tenant;
}

/** The webhook events written for a call, oldest first. */
async function eventsOf(app: App, callId: string) {
  const rows = await prismaOf(app).webhookDelivery.findMany({ where: { callId }, orderBy: { createdAt: 'asc' } });
  return rows.map(
    (row) =>
      JSON.parse(row.payload) as {
        type: string;
        data: { status: string; failure_reason: string | null; answered_by: string | null; voicemail_left: unknown };
      },
  );
}

const row = (app: App, callId: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });

/** The text of each element of a TwiML document, in order, read back by an XML parser. */
function twimlVerbs(twiml: string): [string, string][] {
  const document = new DOMParser({
    onError: (level, message) => {
      throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(twiml, 'text/xml');
  const response = document.documentElement!;
  expect(response.tagName).toBe('Response');
  return Array.from(response.childNodes)
    .filter((node) => node.nodeType === 1)
    .map((node) => [node.nodeName, node.textContent ?? '']);
}

describe('Twilio: asynchronous answering-machine detection', () => {
  const standIn = new TwilioStandIn();
  let app: App;
  const tenants = {} as Record<VoicemailPolicy | 'no_message', Tenant>;

  beforeAll(async () => {
    app = (await buildTestApp({ env: twilioEnv(await standIn.start()) })).app;
    tenants.off = await tenantWith(app, 'off');
    tenants.hang_up = await tenantWith(app, 'hang_up');
    tenants.leave_message = await tenantWith(app, 'leave_message');
    tenants.no_message = await tenantWith(app, 'leave_message', null);
  });

  /** Triggers a call for `tenant`, waits until Twilio was asked to place it and its sid is recorded. */
  async function place(tenant: Tenant, body: Record<string, string> = {}) {
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', ...body }));
    const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
    await waitFor(
      () => row(app, callId),
      (c) => c.providerCallId === create!.sid,
    );
    return { callId, sid: create!.sid, form: create!.form };
  }

  const params = (sid: string, more: Record<string, string>) => ({
    AccountSid: ACCOUNT_SID,
    ApiVersion: '2010-04-01',
    CallSid: sid,
    Called: '+14155552671',
    Caller: AGENT_PHONE,
    Direction: 'outbound-api',
    From: AGENT_PHONE,
    To: '+14155552671',
    ...more,
  });
  const status = (callId: string, sid: string, callStatus: string, more: Record<string, string> = {}) =>
    twilioCallback(app, 'status', callId, params(sid, { CallStatus: callStatus, ...more }));
  /** The verdict as Twilio POSTs it to the AsyncAmdStatusCallback it was given (signed for that URL). */
  const verdict = (callId: string, sid: string, answeredBy: string, policy: VoicemailPolicy) =>
    twilioCallback(app, 'amd', callId, params(sid, { AnsweredBy: answeredBy, MachineDetectionDuration: '4120' }), {
      query: `&voicemail=${policy}`,
    });
  const updatesOf = (sid: string) => standIn.updates.filter((u) => u.sid === sid);

  it('with detection off the dial asks for none and the call ends as before, answered_by null', async () => {
    const { callId, sid, form } = await place(tenants.off);
    for (const name of ['MachineDetection', 'AsyncAmd', 'AsyncAmdStatusCallback', 'AsyncAmdStatusCallbackMethod'])
      expect(form.has(name), name).toBe(false);
    expect((await status(callId, sid, 'in-progress')).statusCode).toBe(204);
    expect((await status(callId, sid, 'completed', { CallDuration: '12' })).statusCode).toBe(204);
    expect(await row(app, callId)).toMatchObject({
      status: 'completed',
      durationSeconds: 12,
      answeredBy: null,
      voicemailLeft: null,
    });
    expect((await eventsOf(app, callId)).map((e) => [e.type, e.data.answered_by, e.data.voicemail_left])).toEqual([
      ['call.started', null, null],
      ['call.completed', null, null],
    ]);
  });

  it('leave_message: a machine hears the message with the name, Twilio SDK TwiML, then the call fails with reason voicemail', async () => {
    const name = `Ada & "Bob" <Lovelace>`;
    const { callId, sid, form } = await place(tenants.leave_message, { name });
    // Asynchronous detection that waits for the greeting's end, its verdict to our signed route.
    expect({
      MachineDetection: form.get('MachineDetection'),
      AsyncAmd: form.get('AsyncAmd'),
      AsyncAmdStatusCallback: form.get('AsyncAmdStatusCallback'),
      AsyncAmdStatusCallbackMethod: form.get('AsyncAmdStatusCallbackMethod'),
    }).toEqual({
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
      AsyncAmdStatusCallback: `${PUBLIC}/telephony/twilio/amd?call_id=${callId}&voicemail=leave_message`,
      AsyncAmdStatusCallbackMethod: 'POST',
    });
    // The call is connected to the agent at once, as without detection.
    await status(callId, sid, 'in-progress');
    expect((await twilioCallback(app, 'twiml', callId, params(sid, {}))).body).toContain('<Connect><Stream');

    expect((await verdict(callId, sid, 'machine_end_beep', 'leave_message')).statusCode).toBe(204);
    const [update, ...more] = updatesOf(sid);
    expect(more).toEqual([]);
    expect([...update!.form.keys()]).toEqual(['Twiml']);
    const spoken = `Hi ${name}, this is Acme Dental about your appointment. Please call us back.`;
    const twiml = update!.form.get('Twiml')!;
    expect(twimlVerbs(twiml)).toEqual([
      ['Say', spoken],
      ['Hangup', ''],
    ]);
    const expected = new twilio.twiml.VoiceResponse();
    expected.say(spoken);
    expected.hangup();
    expect(twiml).toBe(expected.toString());
    expect(await row(app, callId)).toMatchObject({ status: 'in_progress', answeredBy: 'machine', voicemailLeft: true });

    // The <Hangup/> ends it: Twilio reports completed, which for a machine is a failed call.
    expect((await status(callId, sid, 'completed', { CallDuration: '31' })).statusCode).toBe(204);
    const call = await row(app, callId);
    expect(call).toMatchObject({
      status: 'failed',
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: true,
    });
    expect(call.answeredAt).toBeInstanceOf(Date);
    const events = await eventsOf(app, callId);
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.failed']);
    expect(events[1]!.data).toMatchObject({
      status: 'failed',
      failure_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_left: true,
    });
    // Late and repeated callbacks change nothing.
    expect((await verdict(callId, sid, 'human', 'leave_message')).statusCode).toBe(204);
    expect((await status(callId, sid, 'completed')).statusCode).toBe(204);
    expect(await row(app, callId)).toEqual(call);
    expect(updatesOf(sid)).toHaveLength(1);
  });

  it('leave_message for a call without a name drops {{name}} with its blanks', async () => {
    const { callId, sid } = await place(tenants.leave_message);
    await status(callId, sid, 'in-progress');
    await verdict(callId, sid, 'machine_end_silence', 'leave_message');
    expect(twimlVerbs(updatesOf(sid)[0]!.form.get('Twiml')!)[0]).toEqual([
      'Say',
      'Hi, this is Acme Dental about your appointment. Please call us back.',
    ]);
  });

  it('hang_up (and a fax, and leave_message without a message): the machine is hung up on, voicemail_left false', async () => {
    for (const [tenant, answeredBy, policy] of [
      [tenants.hang_up, 'machine_end_other', 'hang_up'],
      [tenants.hang_up, 'fax', 'hang_up'],
      [tenants.no_message, 'machine_end_beep', 'leave_message'],
    ] as const) {
      const { callId, sid } = await place(tenant);
      await status(callId, sid, 'in-progress');
      expect((await verdict(callId, sid, answeredBy, policy)).statusCode).toBe(204);
      expect(updatesOf(sid).map((u) => Object.fromEntries(u.form))).toEqual([{ Status: 'completed' }]);
      expect(await row(app, callId)).toMatchObject({ answeredBy: 'machine', voicemailLeft: false });
      await status(callId, sid, 'completed', { CallDuration: '3' });
      expect(await row(app, callId)).toMatchObject({
        status: 'failed',
        failureReason: 'voicemail',
        answeredBy: 'machine',
        voicemailLeft: false,
      });
      expect((await eventsOf(app, callId)).at(-1)!.data).toMatchObject({
        failure_reason: 'voicemail',
        answered_by: 'machine',
        voicemail_left: false,
      });
    }
  });

  it('a person, or a verdict that cannot tell, is recorded and the call goes on with the agent to its end', async () => {
    for (const [answeredBy, recorded] of [
      ['human', 'human'],
      ['unknown', 'unknown'],
      ['something_new', 'unknown'],
    ] as const) {
      const { callId, sid } = await place(tenants.leave_message);
      // The verdict on a person comes at once: it may beat the answered callback.
      expect((await verdict(callId, sid, answeredBy, 'leave_message')).statusCode).toBe(204);
      expect(await row(app, callId)).toMatchObject({ status: 'dialing', answeredBy: recorded, voicemailLeft: null });
      await status(callId, sid, 'in-progress');
      await status(callId, sid, 'completed', { CallDuration: '40' });
      expect(updatesOf(sid)).toEqual([]);
      expect(await row(app, callId)).toMatchObject({
        status: 'completed',
        failureReason: null,
        answeredBy: recorded,
        voicemailLeft: null,
      });
      expect((await eventsOf(app, callId)).at(-1)).toMatchObject({
        type: 'call.completed',
        data: { answered_by: recorded, voicemail_left: null },
      });
    }
  });

  it('the verdict is verified like every Twilio callback: unsigned, forged or for another policy is 403 and changes nothing', async () => {
    const { callId, sid } = await place(tenants.hang_up);
    await status(callId, sid, 'in-progress');
    const body = params(sid, { AnsweredBy: 'machine_end_beep' });
    const url = `${PUBLIC}/telephony/twilio/amd?call_id=${callId}&voicemail=hang_up`;
    for (const [signature, query] of [
      [null, '&voicemail=hang_up'],
      [signLikeTwilio('wrong-token', url, body), '&voicemail=hang_up'],
      [signLikeTwilio(TOKEN, url, { ...body, AnsweredBy: 'human' }), '&voicemail=hang_up'],
      // Signed for hang_up, sent as leave_message: the URL is part of what Twilio signs.
      [signLikeTwilio(TOKEN, url, body), '&voicemail=leave_message'],
    ] as const) {
      const response = await twilioCallback(app, 'amd', callId, body, { signature, query });
      expect([response.statusCode, response.json()]).toEqual([
        403,
        { success: false, error: 'Invalid Twilio signature' },
      ]);
    }
    expect(await row(app, callId)).toMatchObject({ status: 'in_progress', answeredBy: null });
    expect(updatesOf(sid)).toEqual([]);
    // Signed, but not a verdict this service asked for (no policy, or another call's sid): refused.
    expect((await twilioCallback(app, 'amd', callId, body)).statusCode).toBe(400);
    expect((await verdict(callId, `CA${'e'.repeat(32)}`, 'machine_end_beep', 'hang_up')).statusCode).toBe(404);
    expect(updatesOf(sid)).toEqual([]);
    // Twilio's own validator accepts what reaches the route.
    expect(twilio.validateRequest(TOKEN, signLikeTwilio(TOKEN, url, body), url, body)).toBe(true);
  });

  it('a machine whose call Twilio will not change (it is over) leaves no message; the call still ends failed, voicemail', async () => {
    const { callId, sid } = await place(tenants.leave_message);
    await status(callId, sid, 'in-progress');
    standIn.over.add(sid);
    expect((await verdict(callId, sid, 'machine_end_beep', 'leave_message')).statusCode).toBe(204);
    expect(updatesOf(sid)).toHaveLength(1);
    expect(await row(app, callId)).toMatchObject({ answeredBy: 'machine', voicemailLeft: false });
    await status(callId, sid, 'completed');
    expect(await row(app, callId)).toMatchObject({
      status: 'failed',
      failureReason: 'voicemail',
      voicemailLeft: false,
    });
  });

  it('a verdict after the call ended changes nothing and asks Twilio for nothing', async () => {
    const { callId, sid } = await place(tenants.leave_message);
    await status(callId, sid, 'in-progress');
    await status(callId, sid, 'completed', { CallDuration: '5' });
    const ended = await row(app, callId);
    expect(ended).toMatchObject({ status: 'completed', answeredBy: null });
    expect((await verdict(callId, sid, 'machine_end_beep', 'leave_message')).statusCode).toBe(204);
    expect(await row(app, callId)).toEqual(ended);
    expect(updatesOf(sid)).toEqual([]);
  });
});

describe('the simulated voicemail number', () => {
  let app: App;
  const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120' };

  beforeAll(async () => {
    app = (await buildTestApp({ env: FAST })).app;
  });

  async function ended(tenant: Tenant, phone: string) {
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: phone }));
    const call = await waitFor(
      () => row(app, callId),
      (c) => c.status === 'completed' || c.status === 'failed',
    );
    return { call, events: await eventsOf(app, callId) };
  }

  it(`${SIMULATED_VOICEMAIL} with detection off is answered and completes; answered_by stays null`, async () => {
    const { call, events } = await ended(await tenantWith(app, 'off'), SIMULATED_VOICEMAIL);
    expect(call).toMatchObject({
      status: 'completed',
      answeredBy: null,
      voicemailLeft: null,
      providerCallId: `sim_${call.id}`,
    });
    expect(events.map((e) => [e.type, e.data.answered_by])).toEqual([
      ['call.started', null],
      ['call.completed', null],
    ]);
  });

  it.each([
    ['leave_message', true],
    ['hang_up', false],
  ] as const)(
    `${SIMULATED_VOICEMAIL} with %s is answered by a machine and fails with reason voicemail (voicemail_left %s)`,
    async (policy, left) => {
      const { call, events } = await ended(await tenantWith(app, policy), SIMULATED_VOICEMAIL);
      expect(call).toMatchObject({
        status: 'failed',
        failureReason: 'voicemail',
        answeredBy: 'machine',
        voicemailLeft: left,
      });
      expect(call.answeredAt).toBeInstanceOf(Date);
      expect(events.map((e) => e.type)).toEqual(['call.started', 'call.failed']);
      expect(events[1]!.data).toMatchObject({
        failure_reason: 'voicemail',
        answered_by: 'machine',
        voicemail_left: left,
      });
    },
  );

  it("a claim taken over from a dispatcher that died is dialled with its agent's detection too", async () => {
    const tenant = await tenantWith(app, 'hang_up');
    const past = new Date(Date.now() - 60_000);
    const { id } = await insertCallRow(prismaOf(app), {
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      phoneNumber: SIMULATED_VOICEMAIL,
      fromNumber: '+14155550100',
      notBefore: past,
      expiresAt: new Date(Date.now() + 3_600_000),
      status: 'dialing',
      startedAt: past,
      leaseOwner: 'a-dispatcher-that-died',
      leaseExpiresAt: past,
    });
    const call = await waitFor(
      () => row(app, id),
      (c) => c.status === 'failed' || c.status === 'completed',
    );
    expect(call).toMatchObject({
      status: 'failed',
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: false,
      providerCallId: `sim_${id};voicemail=hang_up`,
      dialAttempts: 1,
    });
  });

  it("a call dialled again starts without the verdict of its earlier attempt: it never ends on that attempt's machine", async () => {
    const tenant = await tenantWith(app, 'off');
    const now = new Date();
    // As a retried call waits for its next attempt after a machine answered the previous one.
    const { id } = await insertCallRow(prismaOf(app), {
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      phoneNumber: '+14155552671',
      fromNumber: '+14155550100',
      notBefore: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      answeredBy: 'machine',
      voicemailLeft: true,
    });
    app.wakeDispatchers(tenant.accountId);
    const call = await waitFor(
      () => row(app, id),
      (c) => c.status === 'failed' || c.status === 'completed',
    );
    expect(call).toMatchObject({ status: 'completed', answeredBy: null, voicemailLeft: null });
  });

  it('with detection on, every other number is answered by a person and completes', async () => {
    const { call, events } = await ended(await tenantWith(app, 'leave_message'), '+14155552671');
    expect(call).toMatchObject({ status: 'completed', answeredBy: 'human', voicemailLeft: null });
    expect(events.at(-1)!.data).toMatchObject({ answered_by: 'human', voicemail_left: null });
  });
});

describe('the message as spoken', () => {
  it('fills {{name}} in, every time it appears, spaces inside the braces tolerated', () => {
    expect(voicemailText('Hi {{name}}! {{ name }}, call us.', 'Ada')).toBe('Hi Ada! Ada, call us.');
    expect(voicemailText('No placeholder here.', 'Ada')).toBe('No placeholder here.');
  });

  it('without a name, drops the placeholder with the blanks before it and punctuation left opening the message', () => {
    for (const name of [null, '', ' \t\n']) {
      expect(voicemailText('Hi {{name}}, this is Acme.', name)).toBe('Hi, this is Acme.');
      expect(voicemailText('Hello {{name}}!', name)).toBe('Hello!');
      expect(voicemailText('{{name}}, please call us back.', name)).toBe('please call us back.');
      expect(voicemailText('Dear {{name}} and {{name}}: hi', name)).toBe('Dear and: hi');
    }
  });

  it('is null when there is nothing to say: no message, a blank one, or only the name of a call without one', () => {
    expect(voicemailText(null, 'Ada')).toBeNull();
    expect(voicemailText('  \n ', 'Ada')).toBeNull();
    expect(voicemailText('{{name}}', null)).toBeNull();
  });

  it('turns line breaks, tabs and control characters into single spaces and drops what XML cannot carry', () => {
    expect(voicemailText('Hi {{name}},\n\tcall\u0007us\u0085back.\uFFFE', 'Ada\r\nB\uD800')).toBe(
      'Hi Ada B, call us back.',
    );
  });

  it('as TwiML: says exactly the text, then hangs up, whatever the text holds', () => {
    for (const text of ['<b>&amp; & "q" \'s\'</b>', 'Zoë 😀 李', ']]> --> <!--']) {
      expect(twimlVerbs(voicemailTwiml(text))).toEqual([
        ['Say', text],
        ['Hangup', ''],
      ]);
    }
  });

  it("the TwiML builder the server loads alone is the Twilio SDK's twiml.VoiceResponse", () => {
    expect(TwiMLVoiceResponse).toBe(twilio.twiml.VoiceResponse);
  });
});

describe('answeredByOf and the end of a call a machine answered', () => {
  it.each([
    ['human', 'human'],
    ['machine_start', 'machine'],
    ['machine_end_beep', 'machine'],
    ['machine_end_silence', 'machine'],
    ['machine_end_other', 'machine'],
    ['fax', 'machine'],
    ['unknown', 'unknown'],
    ['', 'unknown'],
    ['Human', 'unknown'],
  ])('%j -> %s', (twilioValue, expected) => {
    expect(answeredByOf(twilioValue)).toBe(expected);
  });

  it('completed after a machine is failed with reason voicemail; any other status maps as before', () => {
    expect(mapTwilioStatus('completed', '30', 'machine')).toEqual({ kind: 'failed', reason: 'voicemail' });
    expect(mapTwilioStatus('completed', '30', 'human')).toEqual({ kind: 'completed', durationSeconds: 30 });
    expect(mapTwilioStatus('completed', '30', 'unknown')).toEqual({ kind: 'completed', durationSeconds: 30 });
    expect(mapTwilioStatus('in-progress', undefined, 'machine')).toEqual({ kind: 'answered' });
    expect(mapTwilioStatus('busy', undefined, 'machine')).toEqual({ kind: 'failed', reason: 'busy' });
  });
});
