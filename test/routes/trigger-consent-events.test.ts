// The trigger's consent and recipient_region in the webhook events themselves (issue 48.4): a call placed by the
// dispatcher and delivered to a real receiver carries both in call.started and in its terminal event, consent's keys
// in the schema's order whatever order the client wrote them in; compliance is null while the rules are off.
import { beforeAll, describe, expect, it } from 'vitest';
import { CallData } from '../../schemas/call.js';
import type { App } from '../../src/app.js';
import { objectEntries } from '../../src/domain/raw-json.js';
import type { Tenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import type { Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;

beforeAll(async () => {
  ({ app, tenant, receiver } = await buildWebhookApp(40));
});

describe('consent and recipient_region in every event', () => {
  it('call.started and call.completed carry them as stored; compliance null with the rules off', async () => {
    // Obtained long before the real time of the run (the app's clock is the real one here).
    const written = {
      source: 'Phone call, 1998',
      evidence_url: 'https://example.com/c/1.mp3',
      type: 'express',
      obtained_at: '1998-11-20T10:00:00Z',
    };
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      recipient_region: 'us-ca',
      consent: written,
    });
    expect(res.statusCode, res.body).toBe(200);
    const callId = callIdOf(res);
    const deadline = Date.now() + 10_000;
    const mine = () => receiver.received.filter((r) => r.body.includes(callId));
    while (mine().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(mine()).toHaveLength(2);
    const types = [];
    for (const { body } of mine()) {
      const event = json<WebhookEvent>(body);
      types.push(event.type);
      expect(Object.keys(event.data)).toEqual(Object.keys(CallData.properties));
      expect(event.data).toMatchObject({ recipient_region: 'US-CA', compliance: null });
      const data = objectEntries(body).find(([key]) => key === 'data')![1];
      const consent = objectEntries(data).find(([key]) => key === 'consent')![1];
      expect(objectEntries(consent).map(([key]) => key)).toEqual(['type', 'obtained_at', 'source', 'evidence_url']);
      expect(json<unknown>(consent)).toEqual(written);
    }
    expect(types.sort()).toEqual(['call.completed', 'call.started']);
  });
});
