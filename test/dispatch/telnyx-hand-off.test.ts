// What an answered Telnyx call carries to the agent's runtime (docs/agent-runtime.md): the stream hand-off's values as
// streaming_start's custom_parameters, which a real WebSocket receives in Telnyx's `start` frame, and the SIP
// hand-off's as the transfer's X- headers; the same values, in the same order, as on Twilio.
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { decodeClientState, HAND_OFF_LEG_STATE } from '../../src/dispatch/telnyx-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import { AGENT_PHONE, STREAM, TelnyxStandIn, telnyxEnv } from '../helpers/telnyx-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const standIn = new TelnyxStandIn();
let app: App;
let tenant: Tenant;
/** A runtime's WebSocket server: the frames each connection received, by path. */
let runtime: WebSocketServer;
const connections: { path: string; frames: { event: string; [key: string]: unknown }[] }[] = [];

beforeAll(async () => {
  runtime = await new Promise<WebSocketServer>((resolve) => {
    const server: WebSocketServer = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => resolve(server));
  });
  runtime.on('connection', (socket: WebSocket, request) => {
    const connection = { path: request.url ?? '', frames: [] as { event: string }[] };
    connections.push(connection);
    socket.on('message', (data: Buffer) => connection.frames.push(JSON.parse(data.toString()) as { event: string }));
  });
  const local = `ws://127.0.0.1:${(runtime.address() as AddressInfo).port}`;
  standIn.reach('wss://bots.example.test', local);
  standIn.reach(STREAM, `${local}/default`);
  app = (await buildTestApp({ env: telnyxEnv(await standIn.start(), standIn.keys.publicKey) })).app;
  standIn.attach(app);
  tenant = await createTenant(app.storage);
});
afterAll(async () => {
  if (!runtime) return;
  for (const client of runtime.clients) client.terminate();
  await new Promise((resolve) => runtime.close(resolve));
});

/** Triggers a call through the stand-in and answers it; resolves with the call's row and what Telnyx was asked. */
async function answered(body: Record<string, unknown>) {
  const res = await trigger(app, tenant.key, { phone_number: '+14155552671', ...body });
  expect(res.statusCode, res.body).toBe(200);
  const callId = callIdOf(res);
  const dial = await waitFor(
    () => standIn.dials.find((d) => decodeClientState(d.body.client_state)?.callId === callId),
    Boolean,
  );
  // Nothing of the hand-off is in the dial: it is made when the callee answers.
  expect(Object.keys(dial!.body).filter((k) => k.startsWith('stream') || k === 'custom_headers')).toEqual([]);
  await waitFor(
    () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
    (c) => c.providerCallId === dial!.id,
  );
  const { stream, transfer } = await standIn.answer(dial!.id);
  const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
  return { call, id: dial!.id, stream, transfer, commands: standIn.commandsOf(dial!.id) };
}

function expectedCarried(
  call: {
    id: string;
    agentId: string;
    accountId: string;
    phoneNumber: string;
    name: string | null;
    email: string | null;
  },
  names: 'stream' | 'sip',
) {
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
  return values
    .filter((v) => v[2] !== null)
    .map(([parameter, header, value]) => ({ name: names === 'stream' ? parameter : header, value: value! }));
}

describe('the stream hand-off on Telnyx', () => {
  it("starts the agent's stream with the call's values, the agent's statics and the token as custom parameters", async () => {
    await forceAgent(prismaOf(app), tenant.agentId, {
      handoff: 'stream',
      streamUrl: 'wss://bots.example.test/pipecat?tenant=a&x=1',
      streamParameters: [
        { name: 'bot', value: 'sales <"&\'>' },
        { name: 'call_id', value: 'a static may not replace the call id' },
        { name: 'elevenlabs_agent_id', value: 'agent_01' },
      ],
    });
    const { call, id, stream, commands } = await answered({ name: 'Ada\r\nLovelace', email: 'ada@example.com' });
    expect(commands.map((c) => c.action)).toEqual(['streaming_start']);
    const body = commands[0]!.body as { custom_parameters: { name: string; value: string }[] };
    const token = body.custom_parameters.at(-1)!.value;
    expect(await app.contextTokens.verify(token)).toMatchObject({ callId: call.id, attempt: 1 });
    expect(body).toEqual({
      stream_url: 'wss://bots.example.test/pipecat?tenant=a&x=1',
      stream_track: 'inbound_track',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMU',
      custom_parameters: [
        ...expectedCarried(call, 'stream'),
        { name: 'bot', value: 'sales <"&\'>' },
        { name: 'elevenlabs_agent_id', value: 'agent_01' },
        { name: 'context_token', value: token },
      ],
    });
    expect(body.custom_parameters.find((p) => p.name === 'name')!.value).toBe('Ada\r\nLovelace');

    // The runtime's socket gets Telnyx's frames: connected, then start with the parameters, exactly as sent.
    expect(stream).not.toBeNull();
    const connection = await waitFor(
      () => connections.find((c) => c.frames.some((f) => f.event === 'start' && JSON.stringify(f).includes(id))),
      Boolean,
    );
    expect(connection!.path).toBe('/pipecat?tenant=a&x=1');
    expect(connection!.frames[0]).toEqual({ event: 'connected', version: '1.0.0' });
    const start = connection!.frames[1] as unknown as {
      start: { custom_parameters: Record<string, string>; call_control_id: string };
    };
    expect(start.start.call_control_id).toBe(id);
    expect(start.start.custom_parameters).toEqual(
      Object.fromEntries(body.custom_parameters.map(({ name, value }) => [name, value])),
    );
    expect(JSON.stringify(commands)).not.toContain('metadata');
    await standIn.hangUp(id);
  });

  it('uses AGENT_STREAM_URL for an agent without a stream_url, and leaves name and email out when not given', async () => {
    await forceAgent(prismaOf(app), tenant.agentId, { handoff: 'stream', streamUrl: null, streamParameters: [] });
    const { call, id, commands } = await answered({ metadata: { secret: 'never on the wire' } });
    const body = commands[0]!.body as { stream_url: string; custom_parameters: { name: string; value: string }[] };
    expect(body.stream_url).toBe(STREAM);
    expect(body.custom_parameters.map((p) => p.name)).toEqual([
      ...expectedCarried(call, 'stream').map((p) => p.name),
      'context_token',
    ]);
    expect(JSON.stringify(body)).not.toContain('never on the wire');
    await standIn.hangUp(id);
  });
});

describe('the SIP hand-off on Telnyx', () => {
  it("transfers the call to the agent's URI with the same values as X- headers, as text a header can hold", async () => {
    await forceAgent(prismaOf(app), tenant.agentId, {
      handoff: 'sip',
      sipUri: 'sip:agent@sip.example.test;transport=tls?X-Tenant=acme%20co',
      sipHeaders: [
        { name: 'X-Bot', value: 'sales & support; a=b?' },
        { name: 'x-call-id', value: 'a static may not replace the call id' },
      ],
    });
    const name = 'Ada\r\nX-Evil: 1\tZoë 😀';
    const { call, id, transfer, commands } = await answered({ name, email: "o'brien+tag@example.com" });
    expect(commands.map((c) => c.action)).toEqual(['transfer']);
    const body = transfer!.body as { to: string; custom_headers: { name: string; value: string }[] };
    const token = body.custom_headers.at(-1)!.value;
    expect(await app.contextTokens.verify(token)).toMatchObject({ callId: call.id, attempt: 1 });
    expect(body).toEqual({
      to: 'sip:agent@sip.example.test;transport=tls',
      custom_headers: [
        { name: 'X-Tenant', value: 'acme co' },
        ...expectedCarried({ ...call, name: 'Ada  X-Evil: 1 Zoë 😀' }, 'sip'),
        { name: 'X-Bot', value: 'sales & support; a=b?' },
        { name: 'X-Context-Token', value: token },
      ],
      // The agent's leg reports under a state of no call of ours: the route leaves its webhooks alone.
      target_leg_client_state: HAND_OFF_LEG_STATE,
    });
    expect(decodeClientState(HAND_OFF_LEG_STATE)).toBeNull();
    for (const header of body.custom_headers) expect(header.value).not.toMatch(/[\r\n\t]/);
    // The agent hangs up: both legs end, and the call's own leg reports it.
    await standIn.hangUp(id, 'normal_clearing');
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      status: 'completed',
    });
  });

  it('a hand-off Telnyx refuses hangs the call up rather than leave the callee with nobody', async () => {
    await forceAgent(prismaOf(app), tenant.agentId, { handoff: 'stream', streamUrl: null });
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671' });
    const callId = callIdOf(res);
    const dial = await waitFor(
      () => standIn.dials.find((d) => decodeClientState(d.body.client_state)?.callId === callId),
      Boolean,
    );
    await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.providerCallId === dial!.id,
    );
    standIn.over.add(dial!.id); // Telnyx refuses every command to it
    expect((await standIn.event(dial!.id, 'call.answered', {})).statusCode).toBe(204);
    expect(standIn.commandsOf(dial!.id).map((c) => c.action)).toEqual(['streaming_start', 'hangup']);
  });
});
