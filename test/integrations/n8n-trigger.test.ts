// The n8n community node's trigger "On call event" (integrations/n8n, issue 49.3): deliveries the real server sent
// (received by test/helpers/receiver.ts) run the node's webhook() from the package's build; signed ones start the
// workflow, unsigned, tampered, stale or otherwise signed ones are refused (401) with no items. Its node:crypto check
// is cross-checked against the reference library, standardwebhooks.
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import type { Tenant } from '../helpers/fixtures.js';
import type { Received, Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';
import { loadBuilt, webhookContext, type TriggerNode } from './n8n-runtime.js';

const { OutboundCallTriggerTrigger } = loadBuilt<{ OutboundCallTriggerTrigger: new () => TriggerNode }>(
  'nodes/OutboundCallTriggerTrigger/OutboundCallTriggerTrigger.node.js',
);
interface Delivery {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
}
const { verifyDelivery, signingKey } = loadBuilt<{
  verifyDelivery: (delivery: Delivery, key: Buffer, nowSeconds: number) => { ok: boolean };
  signingKey: (secret: string) => Buffer | string;
}>('nodes/OutboundCallTriggerTrigger/signature.js');

let app: App;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;
/** The call.started and call.completed deliveries of one call, as the server sent them. */
let started: Received;
let completed: Received;

beforeAll(async () => {
  ({ app, tenant, receiver, secret } = await buildWebhookApp(20));
  const callId = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { crm: 'L-7' } }));
  const deliveries = await receiver.waitFor(2);
  const ofType = (type: string) =>
    deliveries.find((r) => {
      const event = JSON.parse(r.body) as { type: string; data: { call_id: string } };
      return event.type === type && event.data.call_id === callId;
    })!;
  started = ofType('call.started');
  completed = ofType('call.completed');
});

/** Runs the node's webhook() on a request as n8n hands it over: the raw body and the headers as received. */
async function deliver(headers: Received['headers'], body: string | Buffer, options: { events?: string[] } = {}) {
  const request = { headers: { ...headers }, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
  const { context, response } = webhookContext(request, secret, options.events);
  const result = await new OutboundCallTriggerTrigger().webhook.call(context);
  return { result, response };
}

/** A refusal: the node answered the sender itself with `status`, and started nothing. */
function expectRefused(outcome: Awaited<ReturnType<typeof deliver>>, status: number) {
  expect(outcome.result).toEqual({ noWebhookResponse: true });
  expect(outcome.response.status).toBe(status);
  expect(outcome.response.body).toMatchObject({ success: false, error: expect.any(String) as string });
}

describe('n8n trigger "On call event"', () => {
  it('starts the workflow on each delivery the server signed: one item, the event and its webhook-id', async () => {
    for (const received of [started, completed]) {
      const { result, response } = await deliver(received.headers, received.body);
      expect(response.status).toBe(0);
      expect(result.workflowData).toEqual([
        [{ json: { webhook_id: received.headers['webhook-id'], ...(JSON.parse(received.body) as object) } }],
      ]);
    }
  });

  it('refuses a tampered body, a delivery without its signature, or without any of the three headers', async () => {
    expectRefused(await deliver(completed.headers, completed.body.replace('"L-7"', '"L-8"')), 401);
    const without = (...names: string[]) =>
      Object.fromEntries(Object.entries(completed.headers).filter(([name]) => !names.includes(name)));
    expectRefused(await deliver(without('webhook-signature'), completed.body), 401);
    expectRefused(await deliver(without('webhook-id', 'webhook-timestamp', 'webhook-signature'), completed.body), 401);
    // Another delivery's signature on this body, and this delivery's signature under another id.
    expectRefused(
      await deliver(
        { ...completed.headers, 'webhook-signature': started.headers['webhook-signature'] },
        completed.body,
      ),
      401,
    );
    expectRefused(await deliver({ ...completed.headers, 'webhook-id': 'msg_other' }, completed.body), 401);
  });

  it('refuses a delivery signed more than 5 minutes ago (or ahead), accepts one signed 4 minutes ago', async () => {
    const signer = new Webhook(secret);
    const id = completed.headers['webhook-id'] as string;
    const signedAt = (offsetSeconds: number) => {
      const at = new Date(Math.floor(Date.now() / 1000 + offsetSeconds) * 1000);
      return {
        ...completed.headers,
        'webhook-timestamp': String(at.getTime() / 1000),
        'webhook-signature': signer.sign(id, at, completed.body),
      };
    };
    expectRefused(await deliver(signedAt(-6 * 60), completed.body), 401);
    expectRefused(await deliver(signedAt(6 * 60), completed.body), 401);
    expect((await deliver(signedAt(-4 * 60), completed.body)).result.workflowData).toHaveLength(1);
  });

  it('refuses a delivery signed with another secret, and one it cannot check (its own secret malformed)', async () => {
    const otherSecret = generateWebhookSecret();
    const request = { headers: { ...completed.headers }, body: Buffer.from(completed.body) };
    for (const wrong of [otherSecret, 'whsec_short', 'not-a-secret']) {
      const { context, response } = webhookContext(request, wrong);
      expect(await new OutboundCallTriggerTrigger().webhook.call(context)).toEqual({ noWebhookResponse: true });
      expect(response.status).toBe(401);
    }
  });

  it('acknowledges a signed event not selected under Events without starting the workflow', async () => {
    const { result, response } = await deliver(started.headers, started.body, { events: ['call.completed'] });
    expect(result.workflowData).toBeUndefined();
    expect(result.webhookResponse).toEqual({ received: true, ignored: true });
    expect(response.status).toBe(0);
    expect(
      (await deliver(completed.headers, completed.body, { events: ['call.completed'] })).result.workflowData,
    ).toHaveLength(1);
  });

  it("the signing secret credential's test checks its form", async () => {
    const test = new OutboundCallTriggerTrigger().methods.credentialTest.outboundCallTriggerWebhookSecretTest!;
    expect(await test.call({}, { data: { signingSecret: secret } })).toMatchObject({ status: 'OK' });
    for (const signingSecret of ['', 'abc', 'whsec_', 'whsec_c2hvcnQ=', 'whsec_not base64!']) {
      expect(await test.call({}, { data: { signingSecret } })).toMatchObject({ status: 'Error' });
    }
  });
});

describe('the node:crypto check against standardwebhooks', () => {
  it('accepts and refuses the same deliveries as the reference library', () => {
    const reference = new Webhook(secret);
    const key = signingKey(secret) as Buffer;
    const now = Math.floor(Date.now() / 1000);
    const id = completed.headers['webhook-id'] as string;
    const body = completed.body;
    const sign = (at: number, payload = body, msgId = id) => reference.sign(msgId, new Date(at * 1000), payload);
    const good = sign(now);
    const variants: { name: string; id?: string; timestamp?: string; signature?: string; body?: string }[] = [
      { name: 'as the server sent it', ...(completed.headers as Record<string, string>) },
      { name: 'signed now', timestamp: String(now), signature: good },
      { name: 'two signatures, the second good (a rotation)', timestamp: String(now), signature: `v1,AAAA ${good}` },
      { name: 'a v2 signature only', timestamp: String(now), signature: good.replace('v1,', 'v2,') },
      { name: 'another body', timestamp: String(now), signature: good, body: `${body} ` },
      { name: 'another id', id: 'msg_x', timestamp: String(now), signature: good },
      { name: 'another timestamp', timestamp: String(now - 1), signature: good },
      { name: '310 s old', timestamp: String(now - 310), signature: sign(now - 310) },
      { name: '290 s old', timestamp: String(now - 290), signature: sign(now - 290) },
      { name: '310 s ahead', timestamp: String(now + 310), signature: sign(now + 310) },
      { name: 'no signature', timestamp: String(now) },
      { name: 'a timestamp that is not a number', timestamp: 'soon', signature: good },
    ];
    for (const variant of variants) {
      const headers = {
        'webhook-id': variant.id ?? id,
        'webhook-timestamp': variant.timestamp ?? '',
        'webhook-signature': variant.signature ?? '',
      };
      let referenceAccepts = true;
      try {
        reference.verify(variant.body ?? body, headers);
      } catch {
        referenceAccepts = false;
      }
      const ours = verifyDelivery(
        {
          id: headers['webhook-id'],
          timestamp: variant.timestamp,
          signature: variant.signature,
          body: Buffer.from(variant.body ?? body),
        },
        key,
        now,
      );
      expect({ name: variant.name, accepted: ours.ok }).toEqual({ name: variant.name, accepted: referenceAccepts });
    }
  });
});
