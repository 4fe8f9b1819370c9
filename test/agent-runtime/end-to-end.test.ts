// The agent on the line end to end, with real parts (issue 47.7): the service dialling through the Twilio stand-in,
// which answers, fetches the signed TwiML and opens a real WebSocket to the reference runtime of examples/agent-runtime
// (run as its README says, with node); the runtime reads the hand-off's parameters, fetches the call's context with
// its token and posts a result when the callee hangs up; the CRM's receiver gets exactly one call.completed with it.
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { prismaOf } from '../helpers/app.js';
import { spawnChild } from '../helpers/child-processes.js';
import type { Tenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import type { Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { AGENT_PHONE, PUBLIC, STREAM, TwilioStandIn, twilioEnv } from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';

const standIn = new TwilioStandIn();
let app: App;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;
let runtime: { child: ChildProcess; lines: () => Record<string, unknown>[] };
let serviceUrl: string;

/** Starts the example as its README says (`SERVICE_URL=... node server.js`), on a free port; resolves once it listens. */
async function startRuntime(serviceUrl: string) {
  const child = spawnChild(process.execPath, [path.resolve('examples/agent-runtime/server.js')], {
    env: { ...process.env, SERVICE_URL: serviceUrl, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const lines = () =>
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const listening = await waitFor(
    () => lines().find((l) => l.msg === 'listening'),
    (l) => l !== undefined || child.exitCode !== null,
    20_000,
  );
  if (!listening) throw new Error(`the example runtime did not start: ${output}`);
  return { child, lines, url: listening.url as string };
}

beforeAll(async () => {
  // The runtime is a process of its own posting after the hang-up: on a loaded machine it may take longer than the
  // default 10 s, and the event would go without its result. The wait is the longest allowed; a result ends it.
  ({ app, tenant, receiver, secret } = await buildWebhookApp(0, {
    ...twilioEnv(await standIn.start()),
    AGENT_RESULT_WAIT_SECONDS: '300',
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  serviceUrl = `http://127.0.0.1:${(app.server.address() as import('node:net').AddressInfo).port}`;
  const started = await startRuntime(serviceUrl);
  runtime = started;
  // What Twilio reaches over the internet, here on this machine: the service's PUBLIC_BASE_URL and the stream URL.
  standIn.reach(PUBLIC, serviceUrl);
  standIn.reach(STREAM, `${started.url}/stream`);
});

describe('a call handed to the reference runtime', () => {
  it('reaches the runtime with its parameters, and the CRM gets one call.completed carrying its result', async () => {
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      metadata: { lead: 'L-42', stage: 'warm' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const callId = callIdOf(res);
    const create = await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean);
    await waitFor(
      () => prismaOf(app).call.findUnique({ where: { id: callId } }),
      (c) => c?.providerCallId === create!.sid,
    );

    const answered = await standIn.answer(create!.sid, { mediaFrames: 5 });
    const stream = answered.stream!;
    expect(stream.customParameters).toMatchObject({
      call_id: callId,
      agent_id: tenant.agentId,
      account_id: tenant.accountId,
      from_number: AGENT_PHONE,
      to_number: '+14155552671',
      direction: 'outbound-api',
      attempt: '1',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
    });
    expect(stream.customParameters.context_token).toMatch(/^oct1\./);
    expect(stream.customParameters).not.toHaveProperty('metadata');

    // The runtime fetched the context with the token (metadata as given) and greeted the callee: its audio and mark.
    await waitFor(
      () => stream.received.map((m) => m.event),
      (events) => events.includes('mark'),
      15_000,
    );
    expect(stream.received[0]).toMatchObject({ event: 'media', streamSid: stream.streamSid });
    expect(runtime.lines().find((l) => l.msg === 'context')).toMatchObject({ callId, attempt: 1 });

    await standIn.hangUp(create!.sid, { duration: 7 });
    const completed = await waitFor(
      () => receiver.received.map((r) => json<WebhookEvent>(r.body)).filter((e) => e.type === 'call.completed'),
      (events) => events.length > 0,
      90_000,
    );
    // A second terminal event would come within this.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const events = receiver.received.map((r) => {
      new Webhook(secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      });
      return json<WebhookEvent>(r.body);
    });
    expect(events.filter((e) => e.data.call_id === callId).map((e) => e.type)).toEqual([
      'call.started',
      'call.completed',
    ]);
    expect(completed[0]!.data).toMatchObject({ call_id: callId, status: 'completed' });
    expect(completed[0]!.data.result).toMatchObject({
      outcome: 'conversation_held',
      summary: 'Greeted Ada Lovelace and listened to 100 ms of audio.',
      data: { audio_frames: 5 },
      transcript: [{ speaker: 'agent', text: 'Hello Ada Lovelace, this is Test Agent.' }],
      transcript_url: null,
      recording_url: null,
      opt_out: false,
    });
    expect(runtime.lines().map((l) => l.msg)).toContain('result delivered');

    // The token still reads its own call's context (metadata as given, in its order), and nothing of any other call.
    const token = stream.customParameters.context_token!;
    const read = (id: string) =>
      fetch(`${serviceUrl}/agent-runtime/v1/calls/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const own = await read(callId);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('"metadata":{"lead":"L-42","stage":"warm"}');
    const other = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552672' }));
    const refused = await read(other);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ success: false, error: 'Invalid context token' });
  }, 180_000);
});
