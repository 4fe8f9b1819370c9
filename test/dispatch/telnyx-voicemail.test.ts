// Voicemail detection on Telnyx: premium answering-machine detection asked for on the dial, the signed verdicts, the
// message spoken once the machine's greeting is over and the call then hung up (or the machine hung up on at once),
// and the end as failed with reason voicemail, as on Twilio (test/dispatch/voicemail.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { decodeClientState } from '../../src/dispatch/telnyx-dialer.js';
import type { VoicemailPolicy } from '../../schemas/vocabulary.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import { TelnyxStandIn, telnyxEnv } from '../helpers/telnyx-stand-in.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const MESSAGE = 'Hi {{name}}, this is Acme Dental about your appointment. Please call us back.';
const standIn = new TelnyxStandIn();
let app: App;
const tenants = {} as Record<VoicemailPolicy | 'no_message', Tenant>;

async function tenantWith(voicemail: VoicemailPolicy, message: string | null = MESSAGE): Promise<Tenant> {
  const tenant = await createTenant(app.storage);
  await forceAgent(prismaOf(app), tenant.agentId, { voicemail, voicemailMessage: message });
  // An endpoint, so that every event's delivery (its frozen payload) is written; nothing is sent in these tests.
  await setWebhook(app.storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: app.now() });
  return tenant;
}

beforeAll(async () => {
  app = (await buildTestApp({ env: telnyxEnv(await standIn.start(), standIn.keys.publicKey) })).app;
  standIn.attach(app);
  tenants.off = await tenantWith('off');
  tenants.hang_up = await tenantWith('hang_up');
  tenants.leave_message = await tenantWith('leave_message');
  tenants.no_message = await tenantWith('leave_message', null);
});

const row = (callId: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });

async function eventsOf(callId: string) {
  const rows = await prismaOf(app).webhookDelivery.findMany({ where: { callId }, orderBy: { createdAt: 'asc' } });
  return rows.map(
    (r) =>
      JSON.parse(r.payload) as {
        type: string;
        data: { failure_reason: string | null; answered_by: string | null; voicemail_left: unknown };
      },
  );
}

/** Triggers a call for `tenant`, waits until Telnyx dialled it and its id is recorded, and answers it. */
async function answered(tenant: Tenant, body: Record<string, string> = {}) {
  const callId = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', ...body }));
  const dial = await waitFor(
    () => standIn.dials.find((d) => decodeClientState(d.body.client_state)?.callId === callId),
    Boolean,
  );
  await waitFor(
    () => row(callId),
    (c) => c.providerCallId === dial!.id,
  );
  await standIn.answer(dial!.id);
  return { callId, id: dial!.id, dial: dial! };
}

const actions = (id: string) => standIn.commandsOf(id).map((c) => c.action);

describe('Telnyx: answering-machine detection', () => {
  it('with detection off the dial asks for none, and a verdict nobody asked for changes nothing', async () => {
    const { callId, id, dial } = await answered(tenants.off);
    expect(dial.body).not.toHaveProperty('answering_machine_detection');
    await standIn.machine(id, 'machine');
    await standIn.hangUp(id);
    expect(await row(callId)).toMatchObject({ status: 'completed', answeredBy: null, voicemailLeft: null });
    expect(actions(id)).toEqual(['streaming_start']);
  });

  it('leave_message: once the greeting is over the stream stops, the message is spoken with the name, then the call hangs up and fails with reason voicemail', async () => {
    const name = `Ada & "Bob" <Lovelace>`;
    const { callId, id, dial } = await answered(tenants.leave_message, { name });
    expect(dial.body.answering_machine_detection).toBe('premium');
    expect(decodeClientState(dial.body.client_state)).toMatchObject({ voicemail: 'leave_message' });
    // The call went to the agent at once, as without detection.
    expect(actions(id)).toEqual(['streaming_start']);

    await standIn.machine(id, 'machine');
    expect(await row(callId)).toMatchObject({ status: 'in_progress', answeredBy: 'machine', voicemailLeft: false });
    expect(actions(id)).toEqual(['streaming_start']); // waiting for the greeting's end

    await standIn.greetingEnded(id, 'beep_detected');
    const spoken = `Hi ${name}, this is Acme Dental about your appointment. Please call us back.`;
    const commands = standIn.commandsOf(id);
    expect(commands.map((c) => c.action)).toEqual(['streaming_start', 'streaming_stop', 'speak', 'hangup']);
    expect(commands[2]!.body).toEqual({ payload: spoken, payload_type: 'text', voice: 'female', language: 'en-US' });
    const call = await row(callId);
    expect(call).toMatchObject({
      status: 'failed',
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: true,
    });
    expect(call.answeredAt).toBeInstanceOf(Date);
    const events = await eventsOf(callId);
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.failed']);
    expect(events[1]!.data).toMatchObject({
      failure_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_left: true,
    });

    // Late and repeated webhooks change nothing and ask Telnyx for nothing more.
    await standIn.greetingEnded(id);
    await standIn.machine(id, 'human_residence');
    expect((await standIn.event(id, 'call.speak.ended', { status: 'completed' })).statusCode).toBe(204);
    expect(await row(callId)).toEqual(call);
    expect(standIn.commandsOf(id)).toHaveLength(4);
  });

  it('leave_message when the beep comes before (or instead of) the verdict, and without a name', async () => {
    const { callId, id } = await answered(tenants.leave_message);
    await standIn.greetingEnded(id, 'beep_detected');
    expect(standIn.commandsOf(id).find((c) => c.action === 'speak')!.body.payload).toBe(
      'Hi, this is Acme Dental about your appointment. Please call us back.',
    );
    expect(await row(callId)).toMatchObject({ status: 'failed', failureReason: 'voicemail', voicemailLeft: true });
  });

  it('hang_up (and a fax, and leave_message without a message): the machine is hung up on at once, voicemail_left false', async () => {
    for (const [tenant, result] of [
      [tenants.hang_up, 'machine'],
      [tenants.hang_up, 'fax_detected'],
      [tenants.no_message, 'machine'],
    ] as const) {
      const { callId, id } = await answered(tenant);
      await standIn.machine(id, result);
      expect(actions(id)).toEqual(['streaming_start', 'hangup']);
      await standIn.greetingEnded(id);
      expect(actions(id)).toEqual(['streaming_start', 'hangup']);
      expect(await row(callId)).toMatchObject({
        status: 'failed',
        failureReason: 'voicemail',
        answeredBy: 'machine',
        voicemailLeft: false,
      });
      expect((await eventsOf(callId)).at(-1)!.data).toMatchObject({ answered_by: 'machine', voicemail_left: false });
    }
  });

  it('a person, or a verdict that cannot tell, is recorded and the call goes on with the agent to its end', async () => {
    for (const [result, recorded, standard] of [
      ['human_residence', 'human', false],
      ['human_business', 'human', false],
      ['human', 'human', true],
      ['not_sure', 'unknown', true],
      ['silence', 'unknown', false],
    ] as const) {
      const { callId, id } = await answered(tenants.leave_message);
      await standIn.machine(id, result, { standard });
      expect(await row(callId)).toMatchObject({ status: 'in_progress', answeredBy: recorded, voicemailLeft: null });
      await standIn.hangUp(id);
      expect(actions(id)).toEqual(['streaming_start']);
      expect(await row(callId)).toMatchObject({ status: 'completed', failureReason: null, answeredBy: recorded });
      expect((await eventsOf(callId)).at(-1)).toMatchObject({
        type: 'call.completed',
        data: { answered_by: recorded, voicemail_left: null },
      });
    }
  });

  it('a machine whose call Telnyx will not let speak (it is over) leaves no message; the call still fails, voicemail', async () => {
    const { callId, id } = await answered(tenants.leave_message);
    await standIn.machine(id, 'machine');
    standIn.over.add(id);
    await standIn.greetingEnded(id);
    expect(actions(id)).toEqual(['streaming_start', 'streaming_stop', 'speak', 'hangup']);
    expect(await row(callId)).toMatchObject({ answeredBy: 'machine', voicemailLeft: false });
    standIn.over.delete(id);
    await standIn.hangUp(id);
    expect(await row(callId)).toMatchObject({ status: 'failed', failureReason: 'voicemail', voicemailLeft: false });
  });

  it('a verdict after the call ended changes nothing and asks Telnyx for nothing', async () => {
    const { callId, id } = await answered(tenants.leave_message);
    await standIn.hangUp(id);
    const ended = await row(callId);
    expect(ended).toMatchObject({ status: 'completed', answeredBy: null });
    for (const type of ['call.machine.premium.detection.ended', 'call.machine.premium.greeting.ended'])
      expect((await standIn.event(id, type, { result: 'machine' })).statusCode).toBe(204);
    expect(await row(callId)).toEqual(ended);
    expect(actions(id)).toEqual(['streaming_start']);
  });
});
