// Retries through the Twilio dialer: the second attempt's callbacks name it, and a late callback of the first attempt
// (signed, as Twilio sends it) moves nothing, whether it comes before the second attempt's sid is known or after.
import { describe, expect, it } from 'vitest';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { ACCOUNT_SID, PUBLIC, signLikeTwilio, TOKEN, TwilioStandIn, twilioEnv } from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';
import { forceAgent, insertEndpointRow } from '../helpers/seed.js';

const TO = '+14155552671';

const standIn = new TwilioStandIn();

describe('Twilio retries', () => {
  it('callbacks name the attempt; late ones of the first attempt never move the second', async () => {
    const apiBaseUrl = await standIn.start();
    const { app } = await buildTestApp({
      env: twilioEnv(apiBaseUrl),
    });
    const tenant = await createTenant(app.storage);
    await insertEndpointRow(prismaOf(app), {
      data: { accountId: tenant.accountId, url: 'https://hooks.example.com/calls', secret: 'whsec_test' },
    });
    // Waits of 0 minutes: the second attempt is due as soon as the first ends.
    await forceAgent(prismaOf(app), tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [0] });

    /** A callback as Twilio sends it to `url` (the URL it was given), signed. */
    const callback = (url: string, params: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url: url.slice(PUBLIC.length),
        payload: new URLSearchParams(params).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signLikeTwilio(TOKEN, url, params),
        },
      });
    const status = (sid: string, callStatus: string) => ({
      AccountSid: ACCOUNT_SID,
      CallSid: sid,
      CallStatus: callStatus,
      Direction: 'outbound-api',
      To: TO,
    });
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
      async () => standIn.creates[0],
      (c) => c !== undefined,
    );
    expect(first!.form.get('StatusCallback')).toBe(`${PUBLIC}/telephony/twilio/status?call_id=${callId}`);
    await waitFor(snapshot, (c) => c.providerCallId === first!.sid);

    // Attempt 1 is busy; attempt 2 is dialled at once, its create held: its sid is not known yet.
    standIn.hold(TO);
    expect((await callback(first!.form.get('StatusCallback')!, status(first!.sid, 'busy'))).statusCode).toBe(204);
    const second = await waitFor(
      async () => standIn.creates[1],
      (c) => c !== undefined,
    );
    expect(second!.form.get('StatusCallback')).toBe(`${PUBLIC}/telephony/twilio/status?call_id=${callId}&attempt=2`);
    expect(second!.form.get('Url')).toBe(`${PUBLIC}/telephony/twilio/twiml?call_id=${callId}&attempt=2`);
    const dialling = await waitFor(snapshot, (c) => c.status === 'dialing' && c.attempt === 2);
    expect(dialling).toMatchObject({ providerCallId: null, outcomes: [expect.objectContaining({ outcome: 'busy' })] });

    // Late callbacks of attempt 1: answered, completed, busy again. Nothing moves, and its sid is not taken.
    for (const late of ['in-progress', 'completed', 'busy', 'no-answer'])
      expect((await callback(first!.form.get('StatusCallback')!, status(first!.sid, late))).statusCode).toBe(204);
    const twiml1 = await callback(first!.form.get('Url')!, status(first!.sid, 'in-progress'));
    expect(twiml1.body).toContain('<Hangup/>');
    expect(await snapshot()).toEqual(dialling);

    // The second dial's answer arrives: its sid is recorded; attempt 1's callbacks still change nothing.
    standIn.release(TO);
    await waitFor(snapshot, (c) => c.providerCallId === second!.sid);
    const late = await callback(first!.form.get('StatusCallback')!, status(first!.sid, 'completed'));
    expect([204, 404]).toContain(late.statusCode);
    expect(await snapshot()).toMatchObject({ status: 'dialing', attempt: 2, events: dialling.events });

    // Attempt 2's own callbacks move it.
    const twiml2 = await callback(second!.form.get('Url')!, status(second!.sid, 'in-progress'));
    expect(twiml2.body).toContain('<Connect>');
    expect((await callback(second!.form.get('StatusCallback')!, status(second!.sid, 'in-progress'))).statusCode).toBe(
      204,
    );
    expect(await snapshot()).toMatchObject({ status: 'in_progress', attempt: 2 });
    expect((await callback(second!.form.get('StatusCallback')!, status(second!.sid, 'completed'))).statusCode).toBe(
      204,
    );
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
    expect(standIn.creates).toHaveLength(2);
  });
});
