// The dispatcher's claim reads a waiting call's window in the call's zone: the callee's zone it was accepted with
// (source country or request) stays the call's whatever the agent's zone; a call whose zone is the agent's follows
// the agent's zone as it is when due; a call stored before calls had a zone (timezone null) uses the agent's.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceAgent, forceCalls, insertCallRow } from '../helpers/seed.js';

const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '60' };

describe("the claim reads the window in the call's zone", () => {
  it("country and request zones stay the call's; source agent and legacy calls follow the agent's zone live", async () => {
    let now = new Date('2054-11-23T00:00:00Z'); // Monday: 09:00 in Tokyo, 01:00 in Paris, 19:00 (Sunday) in New York
    const { app } = await buildTestApp({ clock: () => now, env: FAST });
    const tenant = await createTenant(app.storage);
    const agentIn = async (windowTimezone: 'agent' | 'recipient') => {
      const { id } = await createAgent(app.storage, {
        accountId: tenant.accountId,
        name: `Tokyo office hours, ${windowTimezone}'s zone`,
        phone: '+14155550111',
        timezone: 'Asia/Tokyo',
        windows: ['daily 09:00-17:00'],
        outsideWindow: 'queue',
        now: app.now(),
      });
      await forceAgent(prismaOf(app), id, { windowTimezone });
      return id;
    };
    const agentZone = await agentIn('agent');
    const calleeZone = await agentIn('recipient');
    const at1 = '2054-11-23T02:00:00Z'; // 11:00 in Tokyo; 03:00 in Paris; 21:00 in New York
    const scheduled = async (body: object) =>
      callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', scheduled_at: at1, ...body }));

    const followsAgent = await scheduled({ agent_id: agentZone });
    const country = await scheduled({ agent_id: calleeZone, phone_number: '+33142685300' });
    const requested = await scheduled({ agent_id: calleeZone, recipient_timezone: 'America/New_York' });
    const legacy = (
      await insertCallRow(prismaOf(app), {
        accountId: tenant.accountId,
        agentId: calleeZone,
        phoneNumber: '+33142685300',
        fromNumber: '+14155550111',
        notBefore: new Date(at1),
        expiresAt: new Date('2054-11-24T02:00:00Z'),
      })
    ).id;
    const call = (id: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id } });
    expect(await call(followsAgent)).toMatchObject({ timezone: 'Asia/Tokyo', timezoneSource: 'agent' });
    expect(await call(country)).toMatchObject({ timezone: 'Europe/Paris', timezoneSource: 'country' });
    expect(await call(requested)).toMatchObject({ timezone: 'America/New_York', timezoneSource: 'request' });
    expect(await call(legacy)).toMatchObject({ timezone: null, timezoneSource: null });

    // Due at at1, as if accepted under other windows: the claim alone decides by the window.
    await forceCalls(prismaOf(app), { id: { in: [country, requested] } }, { notBefore: new Date(at1) });
    // The operator moves the first agent to Paris while its call waits.
    await forceAgent(prismaOf(app), agentZone, { timezone: 'Europe/Paris' });

    now = new Date(at1);
    await app.dispatcher!.settle();
    // Open in Tokyo, so a claim reading the agents' stored zone would dial all four.
    expect(await call(legacy)).toMatchObject({ startedAt: now }); // no zone of its own: the agent's (Tokyo)
    const paris9 = new Date('2054-11-23T08:00:00Z');
    expect(await call(followsAgent)).toMatchObject({ status: 'initiated', notBefore: paris9 }); // the agent's zone now
    expect(await call(country)).toMatchObject({ status: 'initiated', notBefore: paris9 });
    expect(await call(requested)).toMatchObject({ status: 'initiated', notBefore: new Date('2054-11-23T14:00:00Z') });

    now = paris9; // 09:00 in Paris, 17:00 in Tokyo: the Tokyo window has just closed
    await app.dispatcher!.settle();
    expect(await call(followsAgent)).toMatchObject({ startedAt: paris9 });
    expect(await call(country)).toMatchObject({ startedAt: paris9 });
    expect(await call(requested)).toMatchObject({ status: 'initiated' });

    now = new Date('2054-11-23T14:00:00Z'); // 09:00 in New York, 23:00 in Tokyo
    await app.dispatcher!.settle();
    expect(await call(requested)).toMatchObject({ startedAt: now });
  });
});
