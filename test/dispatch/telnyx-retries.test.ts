// Retries through the Telnyx dialer: busy, then answered on the agent's retry; the second attempt's client_state names
// it, and a late webhook of the first attempt (signed, as Telnyx sends it) moves nothing, whether it comes before the
// second attempt's call_control_id is known or after. An earlier attempt answered late is hung up.
import { describe, expect, it } from 'vitest';
import { decodeClientState } from '../../src/dispatch/telnyx-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { forceAgent, insertEndpointRow } from '../helpers/seed.js';
import { TelnyxStandIn, telnyxEnv } from '../helpers/telnyx-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const TO = '+14155552671';
const standIn = new TelnyxStandIn();

describe('Telnyx retries', () => {
  it('busy, then answered on retry; late webhooks of the first attempt never move the second', async () => {
    const { app } = await buildTestApp({ env: telnyxEnv(await standIn.start(), standIn.keys.publicKey) });
    standIn.attach(app);
    const tenant = await createTenant(app.storage);
    await insertEndpointRow(prismaOf(app), {
      data: { accountId: tenant.accountId, url: 'https://hooks.example.com/calls', secret: 'whsec_test' },
    });
    // Waits of 0 minutes: the second attempt is due as soon as the first ends.
    await forceAgent(prismaOf(app), tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [0] });
    const snapshot = async () => {
      const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } });
      return {
        status: call.status,
        attempt: call.attempt,
        providerCallId: call.providerCallId,
        answeredAt: call.answeredAt,
        events: call.events.length,
        outcomes: call.attemptOutcomes,
      };
    };

    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: TO }));
    const first = await waitFor(
      async () => standIn.dials[0],
      (d) => d !== undefined,
    );
    expect(decodeClientState(first!.body.client_state)).toEqual({ callId, attempt: 1, voicemail: 'off' });
    await waitFor(snapshot, (c) => c.providerCallId === first!.id);

    // Attempt 1 is busy; attempt 2 is dialled at once, its dial held: its call_control_id is not known yet.
    standIn.hold(TO);
    await standIn.hangUp(first!.id, 'user_busy');
    const second = await waitFor(
      async () => standIn.dials[1],
      (d) => d !== undefined,
    );
    expect(decodeClientState(second!.body.client_state)).toEqual({ callId, attempt: 2, voicemail: 'off' });
    expect(second!.body.command_id).toBe(`dial:${callId}:2`);
    const dialling = await waitFor(snapshot, (c) => c.status === 'dialing' && c.attempt === 2);
    expect(dialling).toMatchObject({ providerCallId: null, outcomes: [expect.objectContaining({ outcome: 'busy' })] });

    // Late webhooks of attempt 1: answered, hung up in every way. Nothing moves, and its id is not taken; its late
    // answer is hung up.
    for (const cause of ['normal_clearing', 'user_busy', 'timeout'])
      expect((await standIn.event(first!.id, 'call.hangup', { hangup_cause: cause })).statusCode).toBe(204);
    expect((await standIn.event(first!.id, 'call.answered', {})).statusCode).toBe(204);
    expect(standIn.commandsOf(first!.id).map((c) => c.action)).toEqual(['hangup']);
    expect(await snapshot()).toEqual(dialling);

    // The second dial's answer arrives: its id is recorded; attempt 1's webhooks still change nothing.
    standIn.release(TO);
    await waitFor(snapshot, (c) => c.providerCallId === second!.id);
    expect((await standIn.event(first!.id, 'call.hangup', { hangup_cause: 'normal_clearing' })).statusCode).toBe(204);
    expect(await snapshot()).toMatchObject({ status: 'dialing', attempt: 2, events: dialling.events });

    // Attempt 2's own webhooks move it.
    await standIn.answer(second!.id);
    expect(standIn.commandsOf(second!.id).map((c) => c.action)).toEqual(['streaming_start']);
    expect(await snapshot()).toMatchObject({ status: 'in_progress', attempt: 2 });
    await standIn.hangUp(second!.id, 'normal_clearing');
    expect(await snapshot()).toMatchObject({
      status: 'completed',
      attempt: 2,
      outcomes: [expect.objectContaining({ outcome: 'busy' }), expect.objectContaining({ outcome: 'completed' })],
    });
    const deliveries = await prismaOf(app).webhookDelivery.findMany({
      where: { callId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    expect(
      deliveries.map((d) => json<WebhookEvent>(d.payload)).map((e) => [e.type, e.data.attempt, e.data.attempts]),
    ).toEqual([
      ['call.started', 1, 1],
      ['call.started', 2, 2],
      ['call.completed', 2, 2],
    ]);
    expect(standIn.dials).toHaveLength(2);
  });
});
