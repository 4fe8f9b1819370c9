// End to end through the real dispatcher and delivery worker: each accepted call yields call.started (when dialled)
// and exactly one terminal event, signed per Standard Webhooks and verified with the `standardwebhooks` package.
import { Value } from '@sinclair/typebox/value';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { WebhookEvent } from '../../schemas/webhook.js';
import type { Tenant } from '../helpers/fixtures.js';
import type { Receiver } from '../helpers/receiver.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';
import { prismaOf } from '../helpers/app.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  ({ app, tenant, receiver, secret } = await buildWebhookApp(60));
});

function eventsFor(callId: string) {
  return receiver.received
    .map((r) => ({ r, event: JSON.parse(r.body) as WebhookEvent }))
    .filter(({ event }) => event.data.call_id === callId);
}

async function waitForEvents(callId: string, count: number) {
  const deadline = Date.now() + 10_000;
  while (eventsFor(callId).length < count) {
    if (Date.now() > deadline) throw new Error(`only ${eventsFor(callId).length} events for ${callId}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return eventsFor(callId);
}

describe('webhook events', () => {
  it('a completed call: call.started then call.completed, signed, with the metadata unchanged in both', async () => {
    const metadata = { crm_id: 'L-42', score: 9.5, vip: true, note: null, emoji: 'häppy 😀' };
    const call_id = callIdOf(
      await trigger(app, tenant.key, { phone_number: '+14155552671', name: 'Ada', email: 'ada@example.com', metadata }),
    );
    const events = await waitForEvents(call_id, 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(eventsFor(call_id)).toHaveLength(2);

    const verifier = new Webhook(secret);
    for (const { r, event } of events) {
      expect(() => verifier.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      expect(Value.Check(WebhookEvent, event), JSON.stringify([...Value.Errors(WebhookEvent, event)])).toBe(true);
      expect(event.data.metadata).toEqual(metadata);
      expect(r.headers['content-type']).toBe('application/json');
    }
    const [started, completed] = events.map((e) => e.event);
    expect(started).toMatchObject({
      type: 'call.started',
      data: {
        call_id,
        status: 'dialing',
        name: 'Ada',
        email: 'ada@example.com',
        phone_number: '+14155552671',
        agent_id: tenant.agentId,
      },
    });
    expect(completed).toMatchObject({
      type: 'call.completed',
      data: { call_id, status: 'completed', failure_reason: null },
    });
    expect(completed!.data.answered_at).not.toBeNull();
    expect(completed!.data.duration_seconds).toBeGreaterThanOrEqual(0);
    expect(new Set(events.map((e) => e.r.headers['webhook-id'])).size).toBe(2);
  });

  it('a busy number: call.started then call.failed with the reason, and no call.completed', async () => {
    const call_id = callIdOf(await trigger(app, tenant.key, { phone_number: '+15005550001' }));
    const events = await waitForEvents(call_id, 2);
    expect(events.map((e) => e.event.type)).toEqual(['call.started', 'call.failed']);
    expect(events[1]!.event.data).toMatchObject({ status: 'failed', failure_reason: 'busy', answered_at: null });
  });

  it('a signature made with another secret, or over another body, does not verify', async () => {
    const call_id = callIdOf(await trigger(app, tenant.key));
    const { r } = (await waitForEvents(call_id, 1))[0]!;
    const headers = r.headers as Record<string, string>;
    expect(() => new Webhook(secret).verify(r.body, headers)).not.toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(r.body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(r.body.replace('dialing', 'complete'), headers)).toThrow();
  });

  it('every delivery and attempt is recorded and visible in the call record', async () => {
    const call_id = callIdOf(await trigger(app, tenant.key));
    await waitForEvents(call_id, 2);
    // The receiver answers before the worker records the attempt (its batch commits after the response): wait for
    // both deliveries to leave pending, then check what was recorded.
    const deliveries = await waitFor(
      () =>
        prismaOf(app).webhookDelivery.findMany({
          where: { callId: call_id },
          include: { attempts: true },
          orderBy: { createdAt: 'asc' },
        }),
      (rows) => rows.length === 2 && rows.every((d) => d.status !== 'pending'),
    );
    expect(deliveries.map((d) => [d.eventType, d.status, d.attemptCount])).toEqual([
      ['call.started', 'succeeded', 1],
      ['call.completed', 'succeeded', 1],
    ]);
    for (const d of deliveries)
      expect(d.attempts).toMatchObject([{ attemptNumber: 1, responseStatus: 200, error: null }]);
  });
});
