// The trigger's scheduled_at (issue 23.3): accepted at once and stored, waits until then, the window read at that
// time (reject refuses a time outside it, queue waits for the next opening), the time to live counted from there;
// every bad value a 400 naming the field that stores nothing; and the dispatcher dials it at its time, not before.
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { DATE_TIME_RULE } from '../../schemas/text.js';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { callView } from '../../src/calls/call-view.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let app: App;
let tenant: Tenant;
let now = new Date('2054-11-23T15:00:00Z'); // a Monday: 10:00 in New York
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const after = (ms: number) => new Date(now.getTime() + ms).toISOString();

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => now }));
  tenant = await createTenant(app.storage); // no windows: always open
});

const error = (message: string) => ({ success: false, error: message });
const callCount = () => prismaOf(app).call.count();
const stored = (res: Awaited<ReturnType<typeof trigger>>) =>
  prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });

async function officeHoursAgent(outsideWindow: 'queue' | 'reject'): Promise<string> {
  const agent = await createAgent(app.storage, {
    accountId: tenant.accountId,
    name: `office hours (${outsideWindow})`,
    phone: '+14155550111',
    timezone: 'America/New_York',
    windows: ['mon-fri 09:00-17:00'],
    outsideWindow,
    now: app.now(),
  });
  return agent.id;
}

describe('a scheduled call is accepted at once and waits until its time', () => {
  it('200 initiated; scheduled_at stored as the instant given (its offset read), the dial not before it, the time to live from it', async () => {
    now = new Date('2054-11-23T15:00:00Z');
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      scheduled_at: '2054-11-25T09:30:00+05:30', // 04:00Z on Wednesday
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, call_id: callIdOf(res), status: 'initiated' });
    const call = await stored(res);
    expect(call).toMatchObject({ status: 'initiated', timezoneSource: 'agent' });
    expect(call.scheduledAt?.toISOString()).toBe('2054-11-25T04:00:00.000Z');
    expect(call.notBefore.toISOString()).toBe('2054-11-25T04:00:00.000Z');
    expect(call.expiresAt.toISOString()).toBe('2054-11-26T04:00:00.000Z'); // QUEUED_CALL_TTL_HOURS (24) after it
    // What every webhook event's data carries.
    expect(callView((await app.storage.calls.findCallById(call.id))!)).toMatchObject({
      scheduled_at: '2054-11-25T04:00:00.000Z',
      timezone: 'UTC',
      timezone_source: 'agent',
    });
  });

  it('up to 5 minutes in the past (clock skew) means now; the time given is still recorded', async () => {
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', scheduled_at: after(-5 * MIN) });
    expect(res.statusCode).toBe(200);
    const call = await stored(res);
    expect(call.scheduledAt?.toISOString()).toBe(after(-5 * MIN));
    expect(call.notBefore.toISOString()).toBe(now.toISOString());
    expect(call.expiresAt.getTime() - now.getTime()).toBe(DAY);
  });

  it('exactly 30 days ahead is accepted', async () => {
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', scheduled_at: after(30 * DAY) });
    expect(res.statusCode).toBe(200);
    expect((await stored(res)).notBefore.toISOString()).toBe(after(30 * DAY));
  });

  it('without scheduled_at nothing changes: dialable now, scheduled_at null', async () => {
    const call = await stored(await trigger(app, tenant.key));
    expect(call.scheduledAt).toBeNull();
    expect(call.notBefore.toISOString()).toBe(now.toISOString());
  });
});

describe('the calling window is read at the scheduled time', () => {
  it('policy reject: a time inside the window is accepted even while the window is closed now', async () => {
    now = new Date('2054-11-23T23:30:00Z'); // Monday 18:30 in New York: closed
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: await officeHoursAgent('reject'),
      scheduled_at: '2054-11-24T10:00:00-05:00', // Tuesday 10:00 in New York: open
    });
    expect(res.statusCode).toBe(200);
    expect((await stored(res)).notBefore.toISOString()).toBe('2054-11-24T15:00:00.000Z');
  });

  it("policy reject: a time outside the window is 400 Outside the agent's calling window (even while open now), and nothing is stored", async () => {
    now = new Date('2054-11-23T15:00:00Z'); // Monday 10:00 in New York: open
    const before = await callCount();
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: await officeHoursAgent('reject'),
      scheduled_at: '2054-11-28T10:00:00-05:00', // Saturday
    });
    expect([res.statusCode, res.json()]).toEqual([400, error("Outside the agent's calling window")]);
    expect(await callCount()).toBe(before);
  });

  it('policy queue: a time outside the window waits for the next opening after it, and the time to live counts from there', async () => {
    now = new Date('2054-11-23T15:00:00Z');
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: await officeHoursAgent('queue'),
      scheduled_at: '2054-11-27T20:00:00-05:00', // Friday 20:00 in New York
    });
    expect(res.statusCode).toBe(200);
    const call = await stored(res);
    expect(call.scheduledAt?.toISOString()).toBe('2054-11-28T01:00:00.000Z');
    expect(call.notBefore.toISOString()).toBe('2054-11-30T14:00:00.000Z'); // Monday 09:00 EST
    expect(call.expiresAt.toISOString()).toBe('2054-12-01T14:00:00.000Z');
  });
});

describe('every bad scheduled_at is a 400 naming the field, and stores nothing', () => {
  // The rule's example is documentation, not a time: read from the one place that writes it.
  const FORMAT = `scheduled_at ${DATE_TIME_RULE}`;
  beforeAll(() => {
    now = new Date('2054-11-23T15:00:00Z');
  });

  it.each([
    [
      'more than 5 minutes in the past',
      () => after(-5 * MIN - 1000),
      "scheduled_at must not be in the past (up to 5 minutes behind the server's clock is read as now)",
    ],
    [
      'a year ago',
      () => '2053-11-23T15:00:00Z',
      "scheduled_at must not be in the past (up to 5 minutes behind the server's clock is read as now)",
    ],
    ['more than 30 days ahead', () => after(30 * DAY + 1000), 'scheduled_at must be at most 30 days ahead'],
    ['no offset', () => '2054-11-24T10:00:00', FORMAT],
    ['a date alone', () => '2054-11-24', FORMAT],
    ['a space for the T', () => '2054-11-24 10:00:00Z', FORMAT],
    ['lower-case t and z', () => '2054-11-24t10:00:00z', FORMAT],
    ['a day its month does not have', () => '2054-11-31T10:00:00Z', FORMAT],
    ['February 29 of a common year', () => '2055-02-29T10:00:00Z', FORMAT],
    ['24:00', () => '2054-11-24T24:00:00Z', FORMAT],
    ['a leap second', () => '2054-12-31T23:59:60Z', FORMAT],
    ['an offset beyond 23:59', () => '2054-11-24T10:00:00+24:00', FORMAT],
    ['a Unix time in a string', () => '1795532400', FORMAT],
    ['an empty string', () => '', FORMAT],
    ['a number', () => 1795532400, 'scheduled_at must be a string'],
    ['null', () => null, 'scheduled_at must be a string'],
  ])('%s', async (_name, value, message) => {
    const before = await callCount();
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', scheduled_at: value() });
    expect([res.statusCode, res.json()]).toEqual([400, error(message)]);
    expect(await callCount()).toBe(before);
  });

  it('the phone number is checked first (the error table order), the agent after', async () => {
    const bad = { scheduled_at: after(-DAY) };
    expect((await trigger(app, tenant.key, { phone_number: '+1415555', ...bad })).json()).toEqual(
      error('Invalid phone number format'),
    );
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: '00000000-0000-4000-8000-000000000000',
      ...bad,
    });
    expect(res.json()).toEqual(
      error("scheduled_at must not be in the past (up to 5 minutes behind the server's clock is read as now)"),
    );
  });
});

describe('the published schema states the shape the server reads', () => {
  it('TriggerRequest (a JSON Schema validator with formats) and the server agree on every shape, valid and not', async () => {
    now = new Date('2054-11-23T15:00:00Z');
    const doc = (await app.inject('/api/v1/openapi.json')).json<{ components: { schemas: Record<string, object> } }>();
    const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false });
    (addFormats as unknown as typeof addFormats.default)(ajv);
    const validate = ajv.compile(doc.components.schemas.TriggerRequest!);
    const shapes = [
      '2054-11-24T10:00:00Z',
      '2054-11-24T10:00:00.5Z',
      '2054-11-24T10:00:00.123456789+05:30',
      '2054-11-24T10:00:00-00:00',
      '2054-12-20T23:59:59+23:59',
      '2054-11-24T10:00:00',
      '2054-11-24 10:00:00Z',
      '2054-11-24t10:00:00z',
      '2054-11-31T10:00:00Z',
      '2054-02-29T10:00:00Z',
      '2054-11-24T24:00:00Z',
      '2054-12-18T23:59:60Z',
      '2054-11-24T10:00:00+24:00',
      '2054-11-24T10:00Z',
      '+02026-11-24T10:00:00Z',
      '2054-11-24T10:00:00Z\n',
    ];
    const disagreements: string[] = [];
    for (const scheduled_at of shapes) {
      const body = { phone_number: '+14155552671', scheduled_at };
      const res = await trigger(app, tenant.key, body);
      if ((validate(body) === true) !== (res.statusCode === 200))
        disagreements.push(`${scheduled_at}: schema ${validate(body)}, server ${res.statusCode} ${res.body}`);
    }
    expect(disagreements).toEqual([]);
  });
});

describe('the dispatcher dials a scheduled call at its time, not before', () => {
  it('waits past a time to live shorter than the wait, dials at scheduled_at', async () => {
    let clock = new Date('2054-11-23T15:00:00Z');
    const { app: live } = await buildTestApp({
      clock: () => clock,
      env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '60', QUEUED_CALL_TTL_HOURS: '1' },
    });
    const owner = await createTenant(live.storage);
    const res = await trigger(live, owner.key, { phone_number: '+14155552671', scheduled_at: '2054-11-23T18:00:00Z' });
    const id = callIdOf(res);
    const status = async () => (await prismaOf(live).call.findUniqueOrThrow({ where: { id } })).status;
    await live.dispatcher!.settle();
    expect(await status()).toBe('initiated');

    clock = new Date('2054-11-23T17:59:59Z'); // two hours on: past a 1 h time to live counted from the trigger
    await live.dispatcher!.settle();
    expect(await status()).toBe('initiated');

    clock = new Date('2054-11-23T18:00:00Z');
    await live.dispatcher!.settle();
    expect(await status()).not.toBe('initiated');
    const call = await prismaOf(live).call.findUniqueOrThrow({ where: { id } });
    expect(call.startedAt?.toISOString()).toBe('2054-11-23T18:00:00.000Z');
    expect(call.failureReason).not.toBe('expired');
  });
});
