// What an answered call carries to the agent's runtime (issue 47.2, docs/agent-runtime.md): the same values in the same
// order as stream parameters or SIP headers, the agent's own stream URL and statics, the SIP TwiML as Twilio's SDK
// writes it, and the longest name, email and statics allowed inside Twilio's limits, measured.
import { DOMParser } from '@xmldom/xmldom';
import twilio from 'twilio';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { handOffPairs, sipTarget, staticPairs, type HandOffCall } from '../../src/dispatch/hand-off.js';
import {
  SIP_CARRIED_MAX,
  SIP_STATIC_HEADERS_BUDGET,
  sipHeaderValue,
  TWILIO_PARAMETER_MAX,
  TWILIO_SIP_HEADERS_MAX,
  TWILIO_SIP_URI_MAX,
} from '../../src/domain/hand-off-contract.js';
import { sipTwiml, streamTwiml } from '../../src/routes/telephony/twilio.js';
import { HANDOFF_STATIC_MAX, HANDOFF_VALUE_MAX, type HandoffPair } from '../../schemas/agent-runtime.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { AGENT_PHONE, STREAM, TwilioStandIn, twilioCallback, twilioEnv } from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';

const standIn = new TwilioStandIn();
let app: App;
let tenant: Tenant;

beforeAll(async () => {
  app = (await buildTestApp({ env: twilioEnv(await standIn.start()) })).app;
  tenant = await createTenant(app.storage);
});

/** The longest values the trigger and the agent form allow. */
const LONGEST = {
  /** 200 code points, each four bytes of UTF-8 (twelve characters percent-encoded). */
  name: '😀'.repeat(200),
  /** 254 characters: a 64-character local part and a domain of 189. */
  email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`,
  streamParameters: Array.from({ length: HANDOFF_STATIC_MAX }, (_, i) => ({
    name: `p${i}`.padEnd(40, '_'),
    value: '😀'.repeat(HANDOFF_VALUE_MAX),
  })),
  sipHeaders: Array.from({ length: HANDOFF_STATIC_MAX }, (_, i) => ({
    name: `X-H${i}`.padEnd(40, 'x'),
    value: 'v'.repeat(HANDOFF_VALUE_MAX),
  })),
  sipUri: `sip:${'u'.repeat(TWILIO_SIP_URI_MAX - 'sip:@sip.example.test'.length)}@sip.example.test`,
};

const TOKEN_SHAPE = /^oct1\.[A-Za-z0-9_-]{30}\.[A-Za-z0-9_-]{43}$/;

/** Triggers a call through the Twilio stand-in and fetches the TwiML of its answer, signed as Twilio signs it. */
async function answered(body: Record<string, unknown>) {
  const res = await trigger(app, tenant.key, { phone_number: '+14155552671', ...body });
  expect(res.statusCode, res.body).toBe(200);
  const callId = callIdOf(res);
  const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
  // The TwiML is fetched from our URL when the call is answered: never inlined in the create.
  expect(create!.form.has('Twiml')).toBe(false);
  const twiml = await twilioCallback(app, 'twiml', callId, { CallSid: create!.sid, CallStatus: 'in-progress' });
  expect(twiml.statusCode).toBe(200);
  const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
  return { call, body: twiml.body };
}

function strictly(xml: string) {
  return new DOMParser({
    onError: (level, message) => {
      throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(xml, 'text/xml');
}

function parametersOf(xml: string): HandoffPair[] {
  return Array.from(strictly(xml).getElementsByTagName('Parameter')).map((p) => ({
    name: p.getAttribute('name')!,
    value: p.getAttribute('value')!,
  }));
}

/** The <Sip> URI of a TwiML document and its headers, decoded, in order. */
function sipOf(xml: string) {
  const uri = strictly(xml).getElementsByTagName('Sip').item(0)!.textContent!.trim();
  const query = uri.indexOf('?');
  const headers = uri
    .slice(query + 1)
    .split('&')
    .map((h) => {
      const [name, value] = h.split('=') as [string, string];
      return { name, value: decodeURIComponent(value) };
    });
  return { uri, base: uri.slice(0, query), headersPortion: uri.slice(query + 1), headers };
}

function expectedCarried(call: HandOffCall, token: string, names: 'stream' | 'sip') {
  const values: [string, string, string | null][] = [
    ['call_id', 'X-Call-Id', call.id],
    ['agent_id', 'X-Agent-Id', call.agentId],
    ['account_id', 'X-Account-Id', call.accountId],
    ['from_number', 'X-From-Number', AGENT_PHONE],
    ['to_number', 'X-To-Number', call.phoneNumber],
    ['direction', 'X-Direction', 'outbound-api'],
    ['attempt', 'X-Attempt', '1'],
    ['name', 'X-Name', call.name],
    ['email', 'X-Email', call.email],
  ];
  const pairs = values
    .filter((v) => v[2] !== null)
    .map(([parameter, header, value]) => ({ name: names === 'stream' ? parameter : header, value: value! }));
  return { pairs, token: { name: names === 'stream' ? 'context_token' : 'X-Context-Token', value: token } };
}

describe('the stream hand-off', () => {
  it("carries the call's values, the agent's statics in order and a token for this call's attempt", async () => {
    await forceAgent(prismaOf(app), tenant.agentId, {
      handoff: 'stream',
      streamUrl: 'wss://bots.example.test/pipecat?tenant=a&x=1',
      streamParameters: [
        { name: 'bot', value: 'sales <"&\'>' },
        { name: 'call_id', value: 'a static may not replace the call id' },
        { name: 'elevenlabs_agent_id', value: 'agent_01' },
      ],
    });
    const { call, body } = await answered({ name: 'Ada\r\nLovelace', email: 'ada@example.com' });
    const parameters = parametersOf(body);
    const token = parameters.at(-1)!.value;
    expect(token).toMatch(TOKEN_SHAPE);
    expect(await app.contextTokens.verify(token)).toMatchObject({ callId: call.id, attempt: 1 });
    const expected = expectedCarried(call, token, 'stream');
    expect(parameters).toEqual([
      ...expected.pairs,
      { name: 'bot', value: 'sales <"&\'>' },
      { name: 'elevenlabs_agent_id', value: 'agent_01' },
      expected.token,
    ]);
    expect(parameters.find((p) => p.name === 'name')!.value).toBe('Ada\r\nLovelace');
    expect(strictly(body).getElementsByTagName('Stream').item(0)!.getAttribute('url')).toBe(
      'wss://bots.example.test/pipecat?tenant=a&x=1',
    );
    // Metadata is never inlined: only the names above.
    expect(body).not.toContain('metadata');
  });

  it('leaves name and email out when the trigger gave none, and uses AGENT_STREAM_URL without a stream_url', async () => {
    await forceAgent(prismaOf(app), tenant.agentId, { handoff: 'stream', streamUrl: null, streamParameters: [] });
    const { call, body } = await answered({ metadata: { secret: 'never on the wire' } });
    const parameters = parametersOf(body);
    const expected = expectedCarried(call, parameters.at(-1)!.value, 'stream');
    expect(parameters).toEqual([...expected.pairs, expected.token]);
    expect(parameters.map((p) => p.name)).not.toContain('name');
    expect(strictly(body).getElementsByTagName('Stream').item(0)!.getAttribute('url')).toBe(STREAM);
    expect(body).not.toContain('never on the wire');
  });

  it("is the document Twilio's own builder writes for the same parameters", () => {
    const parameters = [
      { name: 'call_id', value: 'c' },
      { name: 'name', value: `Zoë "O'Brien" <&> 李` },
    ];
    const response = new twilio.twiml.VoiceResponse();
    const stream = response.connect().stream({ url: 'wss://a.test/s?x=1&y=2' });
    for (const p of parameters) stream.parameter(p);
    expect(parametersOf(streamTwiml('wss://a.test/s?x=1&y=2', parameters))).toEqual(parametersOf(response.toString()));
  });
});

describe('the SIP hand-off', () => {
  it("is Twilio's <Dial><Sip> with the same values as percent-encoded X- headers, checked with Twilio's SDK", async () => {
    await forceAgent(prismaOf(app), tenant.agentId, {
      handoff: 'sip',
      sipUri: 'sips:agent@sip.example.test;transport=tls',
      sipHeaders: [
        { name: 'X-Bot', value: 'sales & support; a=b?' },
        { name: 'x-call-id', value: 'a static may not replace the call id' },
      ],
    });
    const name = 'Ada\r\nX-Evil: 1\tZoë 😀';
    const { call, body } = await answered({ name, email: "o'brien+tag@example.com" });
    const sip = sipOf(body);
    // Twilio's SDK writes this very document for this URI.
    const response = new twilio.twiml.VoiceResponse();
    response.dial().sip(sip.uri);
    expect(body).toBe(response.toString());

    expect(sip.base).toBe('sips:agent@sip.example.test;transport=tls');
    const token = sip.headers.at(-1)!.value;
    expect(await app.contextTokens.verify(token)).toMatchObject({ callId: call.id, attempt: 1 });
    const expected = expectedCarried({ ...call, name: 'Ada  X-Evil: 1 Zoë 😀' }, token, 'sip');
    expect(sip.headers).toEqual([...expected.pairs, { name: 'X-Bot', value: 'sales & support; a=b?' }, expected.token]);
    // Only URI characters: no space, no line break can reach a header, and no & or = inside a value.
    expect(sip.uri).toMatch(/^[\x21-\x7e]+$/);
    expect(sip.headersPortion.split('&')).toHaveLength(sip.headers.length);
  });

  it('percent-encodes every value so that it reads back, with control and separator characters as spaces', () => {
    for (const value of ['a b', 'x\r\ny', '&=?;%+', 'Zoë 😀 李', '\u2028\u0085\u007f', 'lone \ud800 surrogate']) {
      const encoded = sipHeaderValue(value);
      expect(encoded).toMatch(/^[A-Za-z0-9._~%-]*$/);
      expect(decodeURIComponent(encoded)).toBe(
        value.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD'),
      );
    }
  });
});

describe('hostile values', () => {
  const call: HandOffCall = {
    id: 'c',
    agentId: 'a',
    accountId: 'acc',
    fromNumber: '+14155550100',
    phoneNumber: '+14155552671',
    attempt: 1,
    name: '"/><Parameter name="call_id" value="evil',
    email: 'x&X-Call-Id=evil@example.com',
  };
  const hostile = [
    '"/><Parameter name="context_token" value="forged',
    ']]><Hangup/><![CDATA[',
    'a\r\nX-Context-Token: forged\r\n',
    '&X-Call-Id=evil&X-Context-Token=forged',
    '%0D%0AX-Evil:%201',
    '\u2028\u0085\u0000\ud800',
  ];

  it('stream: every value reads back as one parameter, never a new one or another name', () => {
    const statics = hostile.map((value, i) => ({ name: `p${i}`, value }));
    const pairs = handOffPairs('stream', call, staticPairs(statics, 'stream'), 'token');
    const read = parametersOf(streamTwiml('wss://a.test/s', pairs));
    expect(read.map((p) => p.name)).toEqual(pairs.map((p) => p.name));
    expect(read.filter((p) => p.name === 'call_id')).toEqual([{ name: 'call_id', value: 'c' }]);
    expect(read.at(-1)).toEqual({ name: 'context_token', value: 'token' });
    // What XML cannot carry at all (NUL, a lone surrogate) is dropped; everything else reads back exactly.
    // eslint-disable-next-line no-control-regex -- the control characters are the subject
    const xmlable = (v: string) => v.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/gu, '');
    expect(read.map((p) => p.value)).toEqual(pairs.map((p) => xmlable(p.value)));
  });

  it('SIP: every value stays one header with its own name; no line break, & or = reaches the URI raw', () => {
    const statics = hostile.map((value, i) => ({ name: `X-H${i}`, value }));
    const pairs = handOffPairs('sip', call, staticPairs(statics, 'sip'), 'token');
    const target = sipTarget('sip:agent@sip.example.test', pairs);
    expect(target.dropped).toEqual([]);
    const sip = sipOf(sipTwiml(target.uri));
    expect(sip.uri).toMatch(/^[\x21-\x7e]+$/);
    expect(sip.headers.map((h) => h.name)).toEqual(pairs.map((p) => p.name));
    expect(sip.headers.filter((h) => h.name === 'X-Context-Token')).toEqual([
      { name: 'X-Context-Token', value: 'token' },
    ]);
    for (const header of sip.headers) expect(header.value).not.toMatch(/[\r\n]/);
    expect(sip.headers.find((h) => h.name === 'X-H4')!.value).toBe('%0D%0AX-Evil:%201');
  });

  it("drops an agent's statics that are malformed, take a reserved name or an X-Twilio- header", () => {
    expect(staticPairs(null, 'stream')).toEqual([]);
    expect(staticPairs({ name: 'bot', value: 'x' }, 'stream')).toEqual([]);
    const stored = [
      { name: 'bot', value: 'sales' },
      { name: 'bad name', value: 'x' },
      { name: 'attempt', value: '9' },
      { name: 'n', value: 7 },
      { name: 'x'.repeat(41), value: 'x' },
      null,
      'bot=x',
    ];
    expect(staticPairs(stored, 'stream')).toEqual([{ name: 'bot', value: 'sales' }]);
    expect(
      staticPairs(
        [
          { name: 'X-Bot', value: 'sales' },
          { name: 'X-ATTEMPT', value: '9' },
          { name: 'X-Twilio-Foo', value: 'x' },
          { name: 'Bot', value: 'x' },
          { name: 'X-Bad_Name', value: 'x' },
        ],
        'sip',
      ),
    ).toEqual([{ name: 'X-Bot', value: 'sales' }]);
  });
});

describe("Twilio's limits, with the longest values allowed", () => {
  const call: HandOffCall = {
    id: 'ffffffff-ffff-4fff-bfff-ffffffffffff',
    agentId: 'ffffffff-ffff-4fff-bfff-ffffffffffff',
    accountId: 'ffffffff-ffff-4fff-bfff-ffffffffffff',
    fromNumber: '+999999999999999',
    phoneNumber: '+999999999999999',
    attempt: 5,
    name: LONGEST.name,
    email: LONGEST.email,
  };
  const token = `oct1.${'A'.repeat(30)}.${'B'.repeat(43)}`;

  it("keeps every stream parameter's name and value under 500 characters", () => {
    const pairs = handOffPairs('stream', call, staticPairs(LONGEST.streamParameters, 'stream'), token);
    expect(pairs).toHaveLength(10 + HANDOFF_STATIC_MAX);
    const longest = Math.max(...pairs.map((p) => p.name.length + p.value.length));
    // UTF-16 units: a code point above U+FFFF counts twice, the most any count gives.
    expect(longest).toBe(40 + 2 * HANDOFF_VALUE_MAX);
    expect(longest).toBeLessThanOrEqual(TWILIO_PARAMETER_MAX);
    const twiml = streamTwiml(STREAM, pairs);
    expect(parametersOf(twiml)).toEqual(pairs);
    // Past Twilio's 4,000 characters for TwiML inlined in a call's create or update (error 32018): it is served from
    // our URL, where Twilio takes up to 64 kB (error 11750).
    expect(twiml.length).toBeGreaterThan(4000);
    expect(Buffer.byteLength(twiml)).toBeLessThan(64 * 1024);
  });

  it("measures the call's own SIP headers at their longest: SIP_CARRIED_MAX", () => {
    const target = sipTarget('sip:a@b', handOffPairs('sip', { ...call, name: null, email: null }, [], token));
    expect(target.headersLength).toBe(SIP_CARRIED_MAX);
    expect(SIP_STATIC_HEADERS_BUDGET).toBe(TWILIO_SIP_HEADERS_MAX - SIP_CARRIED_MAX);
  });

  it('stays under 255 and 1,024 characters, dropping X-Name then X-Email, then static headers from the last', () => {
    // Statics that take the whole static budget: all are sent, and the name and email give way.
    const fitting = [
      { name: 'X-Bot', value: 'v'.repeat(SIP_STATIC_HEADERS_BUDGET - '&X-Bot='.length - 100) },
      { name: 'X-Tenant', value: 'w'.repeat(100 - '&X-Tenant='.length) },
    ];
    const full = sipTarget(LONGEST.sipUri, handOffPairs('sip', call, staticPairs(fitting, 'sip'), token));
    expect(full.uri.indexOf('?')).toBe(TWILIO_SIP_URI_MAX);
    expect(full.headersLength).toBe(TWILIO_SIP_HEADERS_MAX);
    expect(full.dropped).toEqual(['X-Name', 'X-Email']);
    expect(full.overBudget).toBe(false);
    expect(sipOf(sipTwiml(full.uri)).headers.map((h) => h.name)).toEqual([
      'X-Call-Id',
      'X-Agent-Id',
      'X-Account-Id',
      'X-From-Number',
      'X-To-Number',
      'X-Direction',
      'X-Attempt',
      'X-Bot',
      'X-Tenant',
      'X-Context-Token',
    ]);

    // Ten statics of the longest: the last ones that do not fit are left out; the call's ids and the token never are.
    const longest = sipTarget(LONGEST.sipUri, handOffPairs('sip', call, staticPairs(LONGEST.sipHeaders, 'sip'), token));
    expect(longest.headersLength).toBeLessThanOrEqual(TWILIO_SIP_HEADERS_MAX);
    expect(longest.dropped.slice(0, 2)).toEqual(['X-Name', 'X-Email']);
    expect(longest.dropped.slice(2)).toEqual(
      LONGEST.sipHeaders
        .map((h) => h.name)
        .reverse()
        .slice(0, longest.dropped.length - 2),
    );
    const sent = sipOf(sipTwiml(longest.uri)).headers.map((h) => h.name);
    for (const header of ['X-Call-Id', 'X-Agent-Id', 'X-Account-Id', 'X-Attempt', 'X-Context-Token'])
      expect(sent).toContain(header);

    // An ordinary call loses nothing.
    const ordinary = sipTarget(
      'sip:agent@sip.example.test',
      handOffPairs('sip', { ...call, name: 'Ada Lovelace', email: 'ada@example.com' }, [], token),
    );
    expect(ordinary.dropped).toEqual([]);
  });
});
