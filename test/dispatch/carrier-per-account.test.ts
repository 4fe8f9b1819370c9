// Carriers per account (issue 50.3): the environment dials through the simulated dialer, agency A through its own
// Twilio account and agency B through its own Telnyx account (local stand-ins, set with setCarrier as callctl and the
// dashboard do). Each call is dialled at its own carrier with its own credentials and says so (calls.carrier,
// carrier_account_id); a callback is checked with the credentials of the carrier its call was dialled with, so one
// signed with A's token moves A's calls and nobody else's; live changes go through the call's own dialer; the
// simulated dialer fakes no outcome of A's calls; a change of A's credentials is used from the next dial; a client
// of A allowed to choose dials through its own SignalWire project; and without PUBLIC_BASE_URL an account's carrier
// cannot be dialled through (provider_error).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { setCarrier, setClientsChooseCarrier } from '../../src/admin/carriers.js';
import type { App } from '../../src/app.js';
import { checkCarrierAccount, type CarrierApiAddresses } from '../../src/dispatch/carrier-accounts.js';
import { encodeClientState } from '../../src/dispatch/telnyx-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { atFileEnd } from '../helpers/file-end.js';
import { createClientTenant, createTenant, updateAgentSettings, type Tenant } from '../helpers/fixtures.js';
import {
  CONNECTION_ID,
  signLikeTelnyx,
  TELNYX_API_KEY,
  telnyxKeyPair,
  TelnyxStandIn,
} from '../helpers/telnyx-stand-in.js';
import {
  PROJECT_ID,
  SIGNALWIRE_TOKEN,
  SIGNING_KEY,
  signalWireCallback,
  SignalWireStandIn,
  signLikeSignalWire,
  SPACE_URL,
} from '../helpers/signalwire-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import {
  AGENT_PHONE,
  PUBLIC,
  STREAM,
  TwilioCompatibleStandIn,
  type StandInCarrier,
} from '../helpers/twilio-compatible-stand-in.js';
import { signLikeTwilio } from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';

const SID_A = `AC${'a1'.repeat(16)}`;
const TOKEN_A = 'a0'.repeat(16);
const TOKEN_A2 = 'b7'.repeat(16);

/**
 * Agency A's Twilio account at the stand-in: the token it accepts changes when A's credentials do. Its call sids
 * start as the simulated dialer's ids do (`sim_`), so that only what the call says of its carrier keeps the simulated
 * dialer's advance off A's calls, not the shape of their ids.
 */
const twilioA: StandInCarrier = {
  apiPath: '/2010-04-01',
  accountSid: SID_A,
  token: TOKEN_A,
  newSid: () => `sim_CA${randomBytes(16).toString('hex')}`,
  sidPattern: /^sim_CA[0-9a-f]{32}$/,
  errorInfo: (code) => `https://www.twilio.com/docs/errors/${code}`,
  sign: (url, params) => ({ 'x-twilio-signature': signLikeTwilio(twilioA.token, url, params) }),
};
const twilio = new TwilioCompatibleStandIn(twilioA);
const telnyx = new TelnyxStandIn();
const signalwire = new SignalWireStandIn();

/** The carriers' account reads setCarrier checks credentials with: every account is there and owns AGENT_PHONE. */
const accounts = http.createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
  const body = path.endsWith('/IncomingPhoneNumbers.json')
    ? { incoming_phone_numbers: [{ phone_number: AGENT_PHONE }], next_page_uri: null }
    : path === '/v2/phone_numbers'
      ? { data: [{ phone_number: AGENT_PHONE }], meta: { total_pages: 1 } }
      : { sid: SID_A, data: { id: CONNECTION_ID } };
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
});
atFileEnd(() => new Promise<void>((resolve) => accounts.close(() => resolve())));

let at: CarrierApiAddresses;
/** The stand-ins' API addresses. */
let urls: { twilio: string; telnyx: string };
let app: App;
let agencyA: Tenant;
let clientA: Tenant;
let agencyB: Tenant;
/** An agency without a carrier of its own: the environment's simulated dialer. */
let agencyE: Tenant;

const environment = (apiBaseUrls: { twilio: string; telnyx: string }, more: Record<string, string> = {}) => ({
  DIALER: 'simulated',
  TWILIO_API_BASE_URL: apiBaseUrls.twilio,
  TELNYX_API_BASE_URL: apiBaseUrls.telnyx,
  AGENT_STREAM_URL: STREAM,
  SIMULATED_RING_MS: '50',
  SIMULATED_TALK_MS: '50',
  DISPATCH_ENABLED: 'true',
  ...more,
});

function setTwilio(target: App, accountId: string, token: string) {
  const credentials = { account_sid: SID_A, auth_token: token };
  const check = (carrier: Parameters<typeof checkCarrierAccount>[0]) => checkCarrierAccount(carrier, at);
  return setCarrier(target.storage, accountId, { provider: 'twilio', credentials }, OPERATOR, check, target.now());
}

beforeAll(async () => {
  await new Promise<void>((resolve) => accounts.listen(0, '127.0.0.1', resolve));
  const reads = `http://127.0.0.1:${(accounts.address() as AddressInfo).port}`;
  at = { twilioApiBaseUrl: reads, telnyxApiBaseUrl: reads, signalwireApiBaseUrl: reads };
  urls = { twilio: await twilio.start(), telnyx: await telnyx.start() };
  const more = { PUBLIC_BASE_URL: PUBLIC, SIGNALWIRE_API_BASE_URL: await signalwire.start() };
  app = (await buildTestApp({ env: environment(urls, more) })).app;
  telnyx.attach(app);
  agencyA = await createTenant(app.storage, { name: 'Agency A' });
  clientA = await createClientTenant(app.storage, agencyA.accountId, { name: 'Client of A' });
  agencyB = await createTenant(app.storage, { name: 'Agency B' });
  agencyE = await createTenant(app.storage, { name: 'Agency E' });
  await setTwilio(app, agencyA.accountId, TOKEN_A);
  const telnyxCredentials = {
    api_key: TELNYX_API_KEY,
    connection_id: CONNECTION_ID,
    public_key: telnyx.keys.publicKey,
  };
  const check = (carrier: Parameters<typeof checkCarrierAccount>[0]) => checkCarrierAccount(carrier, at);
  await setCarrier(
    app.storage,
    agencyB.accountId,
    { provider: 'telnyx', credentials: telnyxCredentials },
    OPERATOR,
    check,
    app.now(),
  );
});

const row = (callId: string) =>
  prismaOf(app).call.findUniqueOrThrow({
    where: { id: callId },
    select: {
      status: true,
      failureReason: true,
      providerCallId: true,
      answeredAt: true,
      answeredBy: true,
      updatedAt: true,
      carrier: true,
      carrierAccountId: true,
      _count: { select: { events: true } },
    },
  });

/** Triggers a call with `tenant`'s key; resolves once its dial's provider id is recorded. */
async function place(tenant: Tenant, target = app) {
  const callId = callIdOf(await trigger(target, tenant.key, { phone_number: '+14155552671' }));
  await waitFor(
    () => prismaOf(target).call.findUniqueOrThrow({ where: { id: callId } }),
    (c) => !!c.providerCallId,
  );
  return callId;
}

/** A Twilio callback to `/telephony/twilio/<kind>?call_id=...`, signed with `token` as Twilio signs. */
function twilioCallback(
  kind: 'status' | 'amd',
  callId: string,
  params: Record<string, string>,
  token: string,
  query = '',
) {
  const path = `/telephony/twilio/${kind}?call_id=${callId}${query}`;
  return app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signLikeTwilio(token, `${PUBLIC}${path}`, params),
    },
  });
}

const inProgress = (sid: string) => ({ CallSid: sid, AccountSid: SID_A, CallStatus: 'in-progress' });

/** A Telnyx webhook about our call `callId` (its client_state), signed with B's key unless told. */
function telnyxEvent(callId: string, type: string, privateKey = telnyx.keys.privateKey) {
  const body = JSON.stringify({
    data: {
      event_type: type,
      payload: {
        call_control_id: `v3:${randomBytes(8).toString('hex')}`,
        client_state: encodeClientState({ callId, attempt: 1, voicemail: 'off' }),
      },
    },
  });
  const timestamp = Math.floor(Date.now() / 1000);
  return app.inject({
    method: 'POST',
    url: '/telephony/telnyx/events',
    payload: body,
    headers: {
      'content-type': 'application/json',
      'telnyx-timestamp': String(timestamp),
      'telnyx-signature-ed25519': signLikeTelnyx(privateKey, timestamp, body),
    },
  });
}

describe('a carrier per account', () => {
  it("dials each call at its account's carrier with its credentials, and records which", async () => {
    const [ofA, ofClient, ofB, ofE] = [
      await place(agencyA),
      await place(clientA),
      await place(agencyB),
      await place(agencyE),
    ];
    const basicA = `Basic ${Buffer.from(`${SID_A}:${TOKEN_A}`).toString('base64')}`;
    for (const callId of [ofA, ofClient]) {
      // The client uses its agency's carrier: the agency does not let its clients choose.
      expect(twilio.createFor(callId)).toMatchObject({
        authorization: basicA,
        path: `/2010-04-01/Accounts/${SID_A}/Calls.json`,
      });
      expect(await row(callId)).toMatchObject({ carrier: 'twilio', carrierAccountId: agencyA.accountId });
    }
    const dial = telnyx.dialFor(ofB)!;
    expect(dial.body).toMatchObject({ connection_id: CONNECTION_ID, webhook_url: `${PUBLIC}/telephony/telnyx/events` });
    expect(await row(ofB)).toMatchObject({
      carrier: 'telnyx',
      carrierAccountId: agencyB.accountId,
      providerCallId: dial.id,
    });
    expect(await row(ofE)).toMatchObject({ carrier: 'simulated', carrierAccountId: null });
    expect((await row(ofE)).providerCallId).toMatch(/^sim_/);
    expect([twilio.createFor(ofB), twilio.createFor(ofE), telnyx.dialFor(ofA), telnyx.dialFor(ofE)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("accepts callbacks signed with A's token for A's calls only; a refusal changes nothing", async () => {
    const [ofA, ofB, ofE] = [await place(agencyA), await place(agencyB), await place(agencyE)];
    const sidA = (await row(ofA)).providerCallId!;
    await waitFor(
      () => row(ofE),
      (r) => r.status === 'completed',
    );
    const before = { ofB: await row(ofB), ofE: await row(ofE), ofA: await row(ofA) };
    // A's token on B's call and on the environment's call, at Twilio's routes: refused.
    for (const callId of [ofB, ofE]) {
      const sid = (await row(callId)).providerCallId!;
      const refused = await twilioCallback('status', callId, inProgress(sid), TOKEN_A);
      expect([refused.statusCode, refused.json()]).toEqual([
        403,
        { success: false, error: 'Invalid Twilio signature' },
      ]);
    }
    // Another token on A's call: refused.
    expect((await twilioCallback('status', ofA, inProgress(sidA), 'c3'.repeat(16))).statusCode).toBe(403);
    // B's Telnyx key on A's call and on the environment's call; another key on B's call: refused.
    for (const refused of [
      await telnyxEvent(ofA, 'call.answered'),
      await telnyxEvent(ofE, 'call.answered'),
      await telnyxEvent(ofB, 'call.answered', telnyxKeyPair().privateKey),
    ])
      expect([refused.statusCode, refused.json()]).toEqual([
        403,
        { success: false, error: 'Invalid Telnyx signature' },
      ]);
    expect({ ofB: await row(ofB), ofE: await row(ofE), ofA: await row(ofA) }).toEqual(before);

    // A's token on A's call moves it; B's key on B's call moves it, and its hand-off goes through B's Telnyx account.
    expect((await twilioCallback('status', ofA, inProgress(sidA), TOKEN_A)).statusCode).toBe(204);
    expect(await row(ofA)).toMatchObject({ status: 'in_progress' });
    const { stream } = await telnyx.answer((await row(ofB)).providerCallId!);
    expect(stream).not.toBeNull();
    expect(await row(ofB)).toMatchObject({ status: 'in_progress' });
  });

  it("changes A's live call through A's own Twilio account (env: simulated), and fakes no outcome of A's calls", async () => {
    await updateAgentSettings(app.storage, agencyA.agentId, {
      voicemail: 'leave_message',
      voicemailMessage: 'Please call us back',
    });
    try {
      const ofA = await place(agencyA);
      const sid = (await row(ofA)).providerCallId!;
      expect(twilio.createFor(ofA)!.form.get('MachineDetection')).toBe('DetectMessageEnd');
      expect((await twilioCallback('status', ofA, inProgress(sid), TOKEN_A)).statusCode).toBe(204);
      const verdict = { CallSid: sid, AccountSid: SID_A, AnsweredBy: 'machine_end_beep' };
      const amd = await twilioCallback('amd', ofA, verdict, TOKEN_A, '&voicemail=leave_message');
      expect(amd.statusCode).toBe(204);
      // The stand-in accepted the update only with A's credentials: the call's own dialer sent it.
      expect(twilio.updates.filter((u) => u.sid === sid).map((u) => u.form.get('Twiml'))).toEqual([
        expect.stringContaining('Please call us back'),
      ]);
      expect(await row(ofA)).toMatchObject({ status: 'in_progress', answeredBy: 'machine' });

      // Long past the simulated ring and talk, and a housekeeping pass: A's calls stay as their callbacks left them.
      const dialing = await place(agencyA);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await app.dispatcher!.settle();
      expect(await row(dialing)).toMatchObject({ status: 'dialing', answeredAt: null });
      expect(await row(ofA)).toMatchObject({ status: 'in_progress' });
    } finally {
      await updateAgentSettings(app.storage, agencyA.agentId, { voicemail: 'off', voicemailMessage: null });
    }
  });

  it("hands B's call to SIP through B's account; the agent's leg's webhooks are checked with B's key", async () => {
    await updateAgentSettings(app.storage, agencyB.agentId, { handoff: 'sip', sipUri: 'sip:agent@sip.example.test' });
    try {
      const ofB = await place(agencyB);
      const id = (await row(ofB)).providerCallId!;
      const { transfer } = await telnyx.answer(id);
      expect(transfer?.body).toMatchObject({ to: 'sip:agent@sip.example.test' });
      const legState = String(transfer!.body.target_leg_client_state);
      // A webhook of the agent's leg: signed with B's key it is left alone (204); with another key it is refused.
      const leg = { call_control_id: 'v3:agent-leg', client_state: legState };
      expect((await telnyx.event(id, 'call.answered', leg)).statusCode).toBe(204);
      const forged = await telnyx.event(id, 'call.answered', leg, { keyPair: telnyxKeyPair() });
      expect(forged.statusCode).toBe(403);
      expect(await row(ofB)).toMatchObject({ status: 'in_progress', providerCallId: id });
    } finally {
      await updateAgentSettings(app.storage, agencyB.agentId, { handoff: 'stream', sipUri: null });
    }
  });

  it("dials with A's new credentials from the next dial on, and checks its callbacks with them", async () => {
    const before = await place(agencyA);
    await setTwilio(app, agencyA.accountId, TOKEN_A2);
    twilioA.token = TOKEN_A2; // the stand-in now refuses the old token
    const after = await place(agencyA);
    expect(twilio.createFor(after)!.authorization).toBe(
      `Basic ${Buffer.from(`${SID_A}:${TOKEN_A2}`).toString('base64')}`,
    );
    const sid = (await row(after)).providerCallId!;
    expect((await twilioCallback('status', after, inProgress(sid), TOKEN_A)).statusCode).toBe(403);
    expect((await twilioCallback('status', after, inProgress(sid), TOKEN_A2)).statusCode).toBe(204);
    // The call dialled before the change: its callbacks are checked with the account's credentials as they are now.
    const old = (await row(before)).providerCallId!;
    expect((await twilioCallback('status', before, inProgress(old), TOKEN_A2)).statusCode).toBe(204);
  });
});

describe("a client's own carrier", () => {
  it('is dialled while its agency lets clients choose; its callbacks are checked with its signing key', async () => {
    const client = await createClientTenant(app.storage, agencyA.accountId, { name: 'Client on SignalWire' });
    await setClientsChooseCarrier(app.storage, agencyA.accountId, true, OPERATOR, app.now());
    try {
      const credentials = {
        space_url: SPACE_URL,
        project_id: PROJECT_ID,
        token: SIGNALWIRE_TOKEN,
        signing_key: SIGNING_KEY,
      };
      const check = (carrier: Parameters<typeof checkCarrierAccount>[0]) => checkCarrierAccount(carrier, at);
      await setCarrier(
        app.storage,
        client.accountId,
        { provider: 'signalwire', credentials },
        OPERATOR,
        check,
        app.now(),
      );
      const callId = await place(client);
      expect(signalwire.createFor(callId)).toMatchObject({
        authorization: `Basic ${Buffer.from(`${PROJECT_ID}:${SIGNALWIRE_TOKEN}`).toString('base64')}`,
        path: `/api/laml/2010-04-01/Accounts/${PROJECT_ID}/Calls.json`,
      });
      expect(await row(callId)).toMatchObject({ carrier: 'signalwire', carrierAccountId: client.accountId });
      const params = {
        CallSid: (await row(callId)).providerCallId!,
        AccountSid: PROJECT_ID,
        CallStatus: 'in-progress',
      };
      const url = `${PUBLIC}/telephony/signalwire/status?call_id=${callId}`;
      // Its agency's Twilio token, at Twilio's routes or at SignalWire's: refused, nothing changes.
      const before = await row(callId);
      expect((await twilioCallback('status', callId, params, twilioA.token)).statusCode).toBe(403);
      const withToken = { signature: signLikeSignalWire(twilioA.token, url, params) };
      expect((await signalWireCallback(app, 'status', callId, params, withToken)).statusCode).toBe(403);
      expect(await row(callId)).toEqual(before);
      expect((await signalWireCallback(app, 'status', callId, params)).statusCode).toBe(204);
      expect(await row(callId)).toMatchObject({ status: 'in_progress' });
    } finally {
      await setClientsChooseCarrier(app.storage, agencyA.accountId, false, OPERATOR, app.now());
    }
  });
});

describe('without PUBLIC_BASE_URL', () => {
  it("refuses to dial through an account's carrier (provider_error); the environment's dialer still dials", async () => {
    const bare = (await buildTestApp({ env: environment(urls) })).app;
    const agency = await createTenant(bare.storage, { name: 'Agency without callbacks' });
    const other = await createTenant(bare.storage, { name: 'Agency on the environment' });
    await setTwilio(bare, agency.accountId, twilioA.token);
    const creates = twilio.creates.length;
    const refused = callIdOf(await trigger(bare, agency.key, { phone_number: '+14155552671' }));
    const failed = await waitFor(
      () => prismaOf(bare).call.findUniqueOrThrow({ where: { id: refused } }),
      (c) => c.status === 'failed',
    );
    expect(failed).toMatchObject({ failureReason: 'provider_error', providerCallId: null });
    expect(twilio.creates.length).toBe(creates);
    expect(await place(other, bare)).toBeTruthy();
  });
});
