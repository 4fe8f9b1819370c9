// One call lifecycle on every carrier (issue 50.5): the simulated dialer, Twilio, SignalWire and Telnyx, each the
// app's DIALER against its local stand-in (test/helpers/matrix-carriers.ts), whose callbacks are signed as the carrier
// signs them. Answered; busy, then answered on the retry; a machine that hears the agent's message; a waiting call
// canceled before its dial; a runtime's result carried by call.completed. Each is judged where a customer sees it:
// the events a webhook receiver gets, each exactly once.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelCall } from '../../src/admin/calls.js';
import type { AgentInput } from '../../src/admin/agent-input.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { buildTestApp, closeTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant, updateAgentSettings } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { matrixCarriers } from '../helpers/matrix-carriers.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const MESSAGE = 'Hi {{name}}, this is Acme Dental. Please call us back.';
const SPOKEN = 'Hi Ada, this is Acme Dental. Please call us back.';
const RESULT = {
  outcome: 'appointment_booked',
  summary: 'Booked a demo for Tuesday at ten.',
  data: { slot: 'tuesday-10', seats: 3 },
  opt_out: false,
};
const HOUR = 3_600_000;

describe.each(matrixCarriers())('the call lifecycle on $name', (carrier) => {
  let app: App;
  let serviceUrl: string;
  let receiver: Receiver;
  /** The app's clock runs this far ahead of the real one: a test moves it to make a waiting call due. */
  let ahead = 0;

  beforeAll(async () => {
    const env = await carrier.start();
    ({ app } = await buildTestApp({
      env: {
        ...env,
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        // An answered call's terminal event goes at its hang-up: a result posted before it rides with it.
        AGENT_RESULT_WAIT_SECONDS: '0',
      },
      clock: () => new Date(Date.now() + ahead),
    }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    serviceUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // What the carrier reaches over the internet (the service's PUBLIC_BASE_URL), here on this machine.
    carrier.reach(serviceUrl);
    receiver = await startReceiver();
  });
  afterAll(() => closeTestApp(app));

  /** An account whose agent is set as a user would set it, its webhook to the receiver. */
  async function tenantWith(settings: AgentInput = {}): Promise<Tenant> {
    const tenant = await createTenant(app.storage);
    if (Object.keys(settings).length > 0) await updateAgentSettings(app.storage, tenant.agentId, settings);
    await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
    return tenant;
  }

  async function place(tenant: Tenant, phone: string, body: Record<string, string> = {}): Promise<string> {
    const response = await trigger(app, tenant.key, { phone_number: phone, ...body });
    expect(response.statusCode, response.body).toBe(200);
    return callIdOf(response);
  }

  /**
   * Moves the app's clock once no webhook delivery is under way: a delivery in flight when the clock jumps finds its
   * lease run out and is sent again (a clock no real service has). As the webhook tests do (deliveryWorker.settle).
   */
  async function moveClock(ms: number) {
    await app.deliveryWorker!.settle();
    ahead += ms;
  }

  const row = (callId: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });

  /**
   * The carrier was asked to dial the attempt, and the service recorded the carrier's id of it: seen while the attempt
   * lasts, or by its outcome once it has ended. The simulated dialer plays the callee itself, and its 20 ms ring can
   * end the attempt between two looks (CI saw attempt 2 already waiting); a stand-in's attempt lasts until the test
   * sends its callbacks.
   */
  async function dialled(callId: string, attempt: number) {
    await carrier.dialled(callId, attempt);
    await waitFor(
      () => row(callId),
      (c) =>
        (c.attempt === attempt && c.providerCallId !== null) ||
        (c.attemptOutcomes as { attempt: number }[]).some((o) => o.attempt === attempt),
    );
  }

  /** What the receiver got about the call, once its terminal event is written and every event of it was delivered. */
  async function eventsOf(callId: string): Promise<WebhookEvent[]> {
    await waitFor(
      () => prismaOf(app).webhookDelivery.findMany({ where: { callId } }),
      (all) => all.some((d) => d.eventType !== 'call.started') && all.every((d) => d.status === 'succeeded'),
      30_000,
    );
    return receiver.received.map((r) => json<WebhookEvent>(r.body)).filter((e) => e.data.call_id === callId);
  }
  const typesOf = (events: WebhookEvent[]) => events.map((e) => [e.type, e.data.attempt]);

  it('answered, then hung up: call.started, then call.completed, once each', async () => {
    const callId = await place(await tenantWith(), carrier.numbers.answers);
    await dialled(callId, 1);
    await carrier.answer(callId);
    await carrier.hangUp(callId);
    const events = await eventsOf(callId);
    expect(typesOf(events)).toEqual([
      ['call.started', 1],
      ['call.completed', 1],
    ]);
    expect(events[1]!.data).toMatchObject({ status: 'completed', failure_reason: null, attempts: 1, result: null });
    expect(carrier.dials(callId)).toBe(1);
  });

  it('busy on the first attempt, answered on the retry: one call.completed, of attempt 2', async () => {
    const tenant = await tenantWith({ maxAttempts: 2, retryOn: 'busy', retryWaits: '1' });
    const callId = await place(tenant, carrier.numbers.busyThenAnswers);
    await dialled(callId, 1);
    await carrier.busy(callId);
    // The retry waits its minute: the clock is moved past it.
    await waitFor(
      () => row(callId),
      (c) => c.status === 'initiated' && c.nextAttemptAt !== null,
    );
    await moveClock(61_000);
    await app.dispatcher!.settle();
    await dialled(callId, 2);
    await carrier.answer(callId);
    await carrier.hangUp(callId);
    const events = await eventsOf(callId);
    expect(typesOf(events)).toEqual([
      ['call.started', 1],
      ['call.started', 2],
      ['call.completed', 2],
    ]);
    expect(events[2]!.data).toMatchObject({ status: 'completed', attempts: 2, failure_reason: null });
    expect((await row(callId)).attemptOutcomes).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'busy' }),
      expect.objectContaining({ attempt: 2, outcome: 'completed' }),
    ]);
    expect(carrier.dials(callId)).toBe(2);
  });

  it("a machine answers: it hears the agent's message, and the call fails with reason voicemail, once", async () => {
    const tenant = await tenantWith({ voicemail: 'leave_message', voicemailMessage: MESSAGE });
    const callId = await place(tenant, carrier.numbers.voicemail, { name: 'Ada' });
    await dialled(callId, 1);
    await carrier.answer(callId);
    // The stand-ins hear what the carrier was told to play (TwiML's <Say>, Telnyx's speak); the simulated dialer has
    // no line to play it on, and says only that the message was left.
    expect(await carrier.machine(callId)).toBe(carrier.hearsMessages ? SPOKEN : null);
    const events = await eventsOf(callId);
    expect(typesOf(events)).toEqual([
      ['call.started', 1],
      ['call.failed', 1],
    ]);
    expect(events[1]!.data).toMatchObject({
      status: 'failed',
      failure_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_left: true,
    });
  });

  it('canceled while it waits for its time: never dialled, one call.failed with reason canceled', async () => {
    const tenant = await tenantWith();
    const at = new Date(app.now().getTime() + HOUR).toISOString();
    const canceled = await place(tenant, carrier.numbers.answers, { scheduled_at: at });
    // Beside it, a call scheduled for the same time and left alone: the proof that the time came and calls were dialled.
    const kept = await place(tenant, carrier.numbers.answers, { scheduled_at: at });
    expect(await cancelCall(app.storage, canceled, { kind: 'operator' }, app.now())).toMatchObject({
      status: 'failed',
      failure_reason: 'canceled',
      already_canceled: false,
    });
    await moveClock(2 * HOUR);
    await app.dispatcher!.settle();
    await dialled(kept, 1);
    await carrier.answer(kept);
    await carrier.hangUp(kept);
    expect(typesOf(await eventsOf(kept))).toEqual([
      ['call.started', 1],
      ['call.completed', 1],
    ]);
    expect(carrier.dials(canceled)).toBe(0);
    const events = await eventsOf(canceled);
    expect(typesOf(events)).toEqual([['call.failed', 0]]);
    expect(events[0]!.data).toMatchObject({ status: 'failed', failure_reason: 'canceled', started_at: null });
  });

  // The simulated dialer hands the call to no runtime (no line, no context token: docs/webhooks.md, "The terminal
  // event waits for it"), so a runtime's result is a case of the three carriers only.
  it.runIf(carrier.handsOff)(
    "the runtime posts its result with the hand-off's context token: the one call.completed carries it",
    async () => {
      const callId = await place(await tenantWith(), carrier.numbers.answers);
      await dialled(callId, 1);
      const token = await carrier.answer(callId);
      expect(token).toMatch(/^oct1\./);
      const posted = await fetch(`${serviceUrl}/agent-runtime/v1/calls/${callId}/result`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(RESULT),
      });
      expect([posted.status, await posted.json()]).toEqual([200, { success: true }]);
      await carrier.hangUp(callId);
      const events = await eventsOf(callId);
      expect(typesOf(events)).toEqual([
        ['call.started', 1],
        ['call.completed', 1],
      ]);
      expect(events[1]!.data).toMatchObject({ status: 'completed', result: RESULT });
    },
  );
});
