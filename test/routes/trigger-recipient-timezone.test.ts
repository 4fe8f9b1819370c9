// The callee's local hours (issue 23.4): an agent with window_timezone recipient reads its window in the trigger's
// recipient_timezone, else the number's country's one zone, else its own; the call records which. DST changes in
// both hemispheres and windows across midnight, read in the callee's zone; every bad zone a 400 naming the field.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceAgent } from '../helpers/seed.js';

let app: App;
let tenant: Tenant;
let now = new Date('2054-11-23T15:00:00Z');

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => now }));
  tenant = await createTenant(app.storage);
});

const error = (message: string) => ({ success: false, error: message });
const callCount = () => prismaOf(app).call.count();
const stored = (res: Awaited<ReturnType<typeof trigger>>) =>
  prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });

/**
 * An agent in Tokyo (far from every callee here, so a window read in its zone gives other answers) whose windows
 * are read in the callee's zone; set in the database, as the dashboard's form would.
 */
async function agent(
  windows: string[],
  outsideWindow: 'queue' | 'reject' = 'queue',
  windowTimezone: 'agent' | 'recipient' = 'recipient',
): Promise<string> {
  const { id } = await createAgent(app.storage, {
    accountId: tenant.accountId,
    name: `callee hours ${windows.join(' ')}`,
    phone: '+14155550111',
    timezone: 'Asia/Tokyo',
    windows,
    outsideWindow,
    now: app.now(),
  });
  await forceAgent(prismaOf(app), id, { windowTimezone });
  return id;
}

describe('which zone a call gets, and why', () => {
  it("window_timezone agent (the default): the agent's zone, even with a recipient_timezone", async () => {
    const call = await stored(
      await trigger(app, tenant.key, {
        phone_number: '+33142685300',
        agent_id: await agent([], 'queue', 'agent'),
        recipient_timezone: 'America/Chicago',
      }),
    );
    expect(call).toMatchObject({ timezone: 'Asia/Tokyo', timezoneSource: 'agent' });
  });

  it('window_timezone recipient: recipient_timezone first (spelled as the tz database spells it)', async () => {
    const call = await stored(
      await trigger(app, tenant.key, {
        phone_number: '+33142685300',
        agent_id: await agent([]),
        recipient_timezone: 'america/chicago',
      }),
    );
    expect(call).toMatchObject({ timezone: 'America/Chicago', timezoneSource: 'request' });
  });

  it("then the number's country when it has one zone (France), else the agent's (the US has many; +800 has no country)", async () => {
    const id = await agent([]);
    const zoneOf = async (phone_number: string) => {
      const call = await stored(await trigger(app, tenant.key, { phone_number, agent_id: id }));
      return [call.timezone, call.timezoneSource];
    };
    expect(await zoneOf('+33142685300')).toEqual(['Europe/Paris', 'country']);
    expect(await zoneOf('+442071838750')).toEqual(['Europe/London', 'country']);
    expect(await zoneOf('+14155552671')).toEqual(['Asia/Tokyo', 'agent']);
    expect(await zoneOf('+80012345678')).toEqual(['Asia/Tokyo', 'agent']);
  });

  it('the default agent, read with the key, carries its window_timezone (no query of its own)', async () => {
    const own = await createTenant(app.storage, { timezone: 'Asia/Tokyo' });
    await forceAgent(prismaOf(app), own.agentId, { windowTimezone: 'recipient' });
    const call = await stored(await trigger(app, own.key, { phone_number: '+33142685300' }));
    expect(call).toMatchObject({ agentId: own.agentId, timezone: 'Europe/Paris', timezoneSource: 'country' });
  });

  it("the window is read in the callee's zone: reject refuses when the callee's clock is outside, though the agent's is inside", async () => {
    now = new Date('2054-11-23T02:00:00Z'); // Monday 11:00 in Tokyo, Sunday 21:00 in New York
    const id = await agent(['daily 09:00-17:00'], 'reject');
    const before = await callCount();
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: id,
      recipient_timezone: 'America/New_York',
    });
    expect([res.statusCode, res.json()]).toEqual([400, error("Outside the agent's calling window")]);
    expect(await callCount()).toBe(before);
    // Without a zone of its own the US number falls back to the agent's zone, where it is 11:00: accepted.
    expect((await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: id })).statusCode).toBe(200);
  });
});

describe("DST changes in the callee's zone, in both hemispheres", () => {
  // Each: the trigger's time, the windows, the callee's zone and the first dial expected. The agent is in Tokyo and
  // an offset fixed before the change would give another hour, so each case fails unless the change is crossed in
  // the callee's zone.
  it.each([
    [
      'New York, spring forward (8 March 2054, 02:00 EST -> 03:00 EDT): 09:00 EDT is 13:00Z',
      '2054-03-08T06:30:00Z', // 01:30 EST
      ['daily 09:00-17:00'],
      'America/New_York',
      '2054-03-08T13:00:00.000Z',
    ],
    [
      'New York, fall back (1 November 2054, 02:00 EDT -> 01:00 EST): 09:00 EST is 14:00Z',
      '2054-11-01T04:30:00Z', // 00:30 EDT
      ['daily 09:00-17:00'],
      'America/New_York',
      '2054-11-01T14:00:00.000Z',
    ],
    [
      'Sydney, DST ends (5 April 2054, 03:00 AEDT -> 02:00 AEST): 09:00 AEST is 23:00Z',
      '2054-04-04T14:30:00Z', // 01:30 AEDT on the 5th
      ['daily 09:00-17:00'],
      'Australia/Sydney',
      '2054-04-04T23:00:00.000Z',
    ],
    [
      'Sydney, DST starts (4 October 2054, 02:00 AEST -> 03:00 AEDT): 09:00 AEDT is 22:00Z',
      '2054-10-03T15:30:00Z', // 01:30 AEST on the 4th
      ['daily 09:00-17:00'],
      'Australia/Sydney',
      '2054-10-03T22:00:00.000Z',
    ],
    [
      'New York across midnight, spring forward: 01:30 EST is inside 20:00-02:00',
      '2054-03-08T06:30:00Z',
      ['daily 20:00-02:00'],
      'America/New_York',
      '2054-03-08T06:30:00.000Z',
    ],
    [
      'New York across midnight, spring forward: 03:30 EDT is outside; 20:00 EDT that evening is 00:00Z',
      '2054-03-08T07:30:00Z',
      ['daily 20:00-02:00'],
      'America/New_York',
      '2054-03-09T00:00:00.000Z',
    ],
    [
      'Sydney across midnight, DST starts: 03:30 AEDT is inside 22:00-06:00',
      '2054-10-03T16:30:00Z',
      ['daily 22:00-06:00'],
      'Australia/Sydney',
      '2054-10-03T16:30:00.000Z',
    ],
    [
      'Sydney across midnight, DST starts: 06:30 AEDT is outside; 22:00 AEDT that evening is 11:00Z',
      '2054-10-03T19:30:00Z',
      ['daily 22:00-06:00'],
      'Australia/Sydney',
      '2054-10-04T11:00:00.000Z',
    ],
    [
      'Sydney across midnight, DST ends: 05:30 AEST is inside 22:00-06:00 (an hour later in UTC than the day before)',
      '2054-04-04T19:30:00Z',
      ['daily 22:00-06:00'],
      'Australia/Sydney',
      '2054-04-04T19:30:00.000Z',
    ],
  ])('%s', async (_name, at, windows, zone, expected) => {
    now = new Date(at);
    const id = await agent(windows);
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: id,
      recipient_timezone: zone,
    });
    expect(res.statusCode).toBe(200);
    const call = await stored(res);
    expect(call).toMatchObject({ timezone: zone, timezoneSource: 'request' });
    expect(call.notBefore.toISOString()).toBe(expected);
  });

  it("the country's zone also follows its DST: London (29 March 2054, 01:00 GMT -> 02:00 BST): 09:00 BST is 08:00Z", async () => {
    now = new Date('2054-03-29T00:30:00Z');
    const call = await stored(
      await trigger(app, tenant.key, { phone_number: '+442071838750', agent_id: await agent(['daily 09:00-17:00']) }),
    );
    expect(call).toMatchObject({ timezone: 'Europe/London', timezoneSource: 'country' });
    expect(call.notBefore.toISOString()).toBe('2054-03-29T08:00:00.000Z');
  });
});

describe('every bad recipient_timezone is a 400 naming the field, whatever the agent, and stores nothing', () => {
  const UNKNOWN = 'recipient_timezone must be an IANA time zone name such as America/New_York';
  it.each([
    ['an unknown zone', 'Mars/Olympus_Mons', UNKNOWN],
    ['a misspelt zone', 'America/NewYork', UNKNOWN],
    ['a UTC offset', '+05:00', UNKNOWN],
    ['an abbreviation no zone is named after', 'AEST', UNKNOWN],
    ['an empty string', '', 'recipient_timezone must not be empty'],
    ['65 characters', `America/${'x'.repeat(57)}`, 'recipient_timezone must be at most 64 characters'],
    ['a number', -5, 'recipient_timezone must be a string'],
    ['null', null, 'recipient_timezone must be a string'],
  ])('%s', async (_name, value, message) => {
    now = new Date('2054-11-23T15:00:00Z');
    for (const agent_id of [tenant.agentId, await agent([])]) {
      const before = await callCount();
      const res = await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id, recipient_timezone: value });
      expect([res.statusCode, res.json()]).toEqual([400, error(message)]);
      expect(await callCount()).toBe(before);
    }
  });
});
