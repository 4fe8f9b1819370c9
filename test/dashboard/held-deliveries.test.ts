// The dashboard's side of held deliveries (issue 21.2): after a 410 a call's call.completed is held and shown, with
// its reason, on the call's detail view, in the delivery log and as "N events held since" on API & Webhooks; "Enable
// again" sends them, each once, with its webhook-id. Through the real app, database and a real receiver.
import { beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { match } from '../helpers/matchers.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor, type Answer } from './helpers.js';

const OWN = '/dashboard/settings/api-webhooks';
let app: App;
let tenant: Tenant;
let receiver: Receiver;
let visitor: Visitor;

beforeAll(async () => {
  ({ app } = await buildTestApp({
    env: { ...DASHBOARD_ENV, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  }));
  tenant = await createTenant(app.storage);
  receiver = await startReceiver();
  await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
  await createUserWithPassword(app.storage, tenant.accountId, 'owner@held.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('owner@held.example')).status).toBe(303);
});

const flashOf = async (res: Answer) => {
  expect(res.status).toBe(303);
  return /<p class="notice (?:ok|error)" role="status">([^<]*)<\/p>/.exec((await visitor.get(res.location!)).body)?.[1];
};
const step = (callId: string, update: Parameters<typeof applyCallUpdate>[2]) =>
  applyCallUpdate(app.storage, callId, update, { now: app.now(), source: 'provider' });

describe('a call that completes while its endpoint is disabled', () => {
  it('shows its held call.completed with the reason, and "Enable again" sends it once with its webhook-id', async () => {
    receiver.respond = () => ({ status: 410 });
    const callId = callIdOf(
      await trigger(app, tenant.key, { phone_number: '+14155552671' }, { 'x-forwarded-proto': 'https' }),
    );
    await step(callId, { kind: 'dialing' });
    await app.deliveryWorker!.settle();
    await step(callId, { kind: 'answered' });
    await step(callId, { kind: 'completed', durationSeconds: 30 });
    await app.deliveryWorker!.settle();
    expect(receiver.received).toHaveLength(1);
    const completed = await prismaOf(app).webhookDelivery.findFirstOrThrow({
      where: { callId, eventType: 'call.completed' },
    });
    expect(completed.status).toBe('held');

    // The call's detail view: both deliveries, held, with the reason; no Resend for a held one.
    const detail = (await visitor.get(`/dashboard/calls/${callId}`)).body;
    expect(detail).toContain(
      '<code>call.completed</code> <span class="badge status held" data-tone="wait">held</span>',
    );
    expect(detail).toMatch(
      /Held: endpoint disabled \(answered 410 Gone at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\)\. Sent when the endpoint is enabled again\./,
    );
    expect(detail).toContain(`webhook-id <code>${completed.id}</code>`);
    expect(detail).not.toContain(`/deliveries/${completed.id}/resend`);

    // The delivery log: held, with the reason.
    const log = (await visitor.get(`${OWN}/deliveries`)).body;
    const start = log.indexOf(`id="delivery-${completed.id}"`);
    const row = log.slice(start, log.indexOf('</article>', start));
    expect(row).toContain(
      '<span class="badge" data-tone="muted">Held</span> <strong class="event">call.completed</strong>',
    );
    expect(row).toMatch(
      /<p class="hint held-reason">Held: endpoint disabled \(answered 410 Gone at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\); sent when it is enabled again\.<\/p>/,
    );
    // No Resend anywhere while the endpoint is disabled (the banner says why), nor a "Resend failed" form.
    expect(log).toContain('Deliveries cannot be resent while the endpoint is disabled');
    expect(log).not.toContain('/resend');

    // API & Webhooks: how many are held and since when; the button says it sends them.
    const settings = (await visitor.get(OWN)).body;
    expect(settings).toContain('0 waiting to be sent, 2 held, 0 failed');
    expect(settings).toMatch(
      /<strong>2 events held since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/strong>: enabling sends them/,
    );
    expect(settings).toContain('Enable again and send the 2 held events');

    receiver.respond = () => ({ status: 204 });
    const enabled = await visitor.submit(OWN, `${OWN}/webhook/enable`);
    expect(await flashOf(enabled)).toContain(
      'The endpoint is enabled again, with the same signing secret. 2 held events are being sent now.',
    );
    await app.deliveryWorker!.settle();
    const sent = receiver.received
      .slice(1)
      .map((r) => ({ id: r.headers['webhook-id'], event: json<WebhookEvent>(r.body) }));
    expect(sent.filter((e) => e.event.type === 'call.completed')).toEqual([
      {
        id: completed.id,
        event: match.objectContaining({
          type: 'call.completed',
          data: match.objectContaining({ call_id: callId, status: 'completed' }),
        }),
      },
    ]);
    expect(sent).toHaveLength(2);
    expect((await visitor.get(`/dashboard/calls/${callId}`)).body).toContain(
      '<code>call.completed</code> <span class="badge status succeeded" data-tone="ok">delivered</span>',
    );
    expect((await visitor.get(OWN)).body).toContain('0 waiting to be sent, 0 held, 0 failed');
  });
});
