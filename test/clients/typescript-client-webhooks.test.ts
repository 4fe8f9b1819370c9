// The TypeScript client's webhooks.verify on deliveries the real server sent (its dispatcher and delivery worker, to a
// receiver on 127.0.0.1): the events come back typed; a changed body, another secret, a stale timestamp and missing
// headers are refused with a typed error.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import {
  createClient,
  WebhookVerificationError,
  type Client,
  type WebhookEvent,
} from '../../clients/typescript/src/index.js';
import type { Tenant } from '../helpers/fixtures.js';
import type { Received, Receiver } from '../helpers/receiver.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;
let client: Client;
/** The deliveries of one completed call, as the receiver got them: call.started then call.completed. */
let deliveries: Received[];
let callId: string;

beforeAll(async () => {
  ({ app, tenant, receiver, secret } = await buildWebhookApp(20));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  client = createClient({ baseUrl: `http://127.0.0.1:${address.port}`, apiKey: tenant.key });
  const result = await client.triggerCall({ phone_number: '+14155552671', metadata: { crm_id: 'L-42' } });
  if (!result.ok) throw result.error;
  callId = result.data.call_id;
  deliveries = await receiver.waitFor(2);
});

afterEach(() => {
  vi.useRealTimers();
});

/** What verify throws for this delivery, or null when it accepts it. */
function refusal(body: string, headers: Received['headers'], key = secret): WebhookVerificationError | null {
  try {
    client.webhooks.verify(body, headers, key);
    return null;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
}

describe('webhooks.verify', () => {
  it('accepts what the server sent and returns the typed events, call.started then call.completed', () => {
    const events: WebhookEvent[] = deliveries.map((d) => client.webhooks.verify(d.body, d.headers, secret));
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.completed']);
    for (const event of events) {
      expect(event.data).toMatchObject({ call_id: callId, metadata: { crm_id: 'L-42' } });
      // The type narrows on `type`: a completed call's data has its result (null when the runtime reported none).
      if (event.type === 'call.completed') {
        expect(event.data.status).toBe('completed');
        expect(event.data.result === null || typeof event.data.result.opt_out === 'boolean').toBe(true);
      }
    }
  });

  it('accepts the raw bytes and a fetch Headers as well as a string and Node headers', () => {
    const [delivery] = deliveries as [Received];
    const headers = new Headers();
    for (const [name, value] of Object.entries(delivery.headers))
      if (typeof value === 'string') headers.set(name, value);
    const event = client.webhooks.verify(new TextEncoder().encode(delivery.body), headers, secret);
    expect(event.type).toBe('call.started');
  });

  it('refuses a tampered body', () => {
    const [delivery] = deliveries as [Received];
    const tampered = delivery.body.replace('L-42', 'L-43');
    expect(tampered).not.toBe(delivery.body);
    expect(refusal(tampered, delivery.headers)).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses a delivery checked with another secret', () => {
    const [delivery] = deliveries as [Received];
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(refusal(delivery.body, delivery.headers, other)).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses a stale timestamp: the same delivery checked six minutes later', () => {
    const [delivery] = deliveries as [Received];
    vi.setSystemTime(Date.now() + 6 * 60_000);
    expect(refusal(delivery.body, delivery.headers)).toMatchObject({ reason: 'stale_timestamp' });
    vi.useRealTimers();
    expect(refusal(delivery.body, delivery.headers)).toBeNull();
  });

  it('refuses a delivery without its signature headers', () => {
    const [delivery] = deliveries as [Received];
    const unsigned = { ...delivery.headers, 'webhook-signature': undefined };
    expect(refusal(delivery.body, unsigned)).toMatchObject({ reason: 'missing_headers' });
  });
});
