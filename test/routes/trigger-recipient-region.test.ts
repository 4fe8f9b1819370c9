// The trigger's recipient_region (issue 48.2) and the `reject` policy under the calling rules: a region normalised and
// stored whether or not the rules are on, an unknown one a 400 naming the field that stores nothing; with the agency's
// rules on, an agent whose policy is reject refuses a dial moment (scheduled_at, else now) that a place the callee may
// be does not allow, after its own window; queue accepts it. Settings changes apply to the next trigger.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COMPLIANCE_ERRORS } from '../../schemas/compliance.js';
import { errorMessage } from '../../schemas/error-codes.js';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { callView } from '../../src/calls/call-view.js';
import { RECIPIENT_REGION_MESSAGE } from '../../src/compliance/candidates.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, updateAgentSettings, type Tenant } from '../helpers/fixtures.js';
import { storeAgencyCallingRules, storeCallingRulesAsIs } from '../helpers/seed/compliance-settings.js';
import { insertDoNotCallEntry } from '../helpers/seed/do-not-call.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let app: App;
let now = new Date('2054-11-23T15:00:00Z'); // a Monday: 10:00 in New York, 07:00 in Los Angeles
/** Monday 20:30 in New York (Florida's 8:00-20:00 has ended), 17:30 in Los Angeles (the TCPA's 8:00-21:00 has not). */
const FLORIDA_CLOSED = new Date('2054-11-24T01:30:00Z');
const FLORIDA = '+13055550123'; // Miami: US-FL, America/New_York
const CALIFORNIA = '+14155552671'; // San Francisco: US-CA, America/Los_Angeles

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => now }));
});

beforeEach(() => {
  now = new Date('2054-11-23T15:00:00Z');
});

const error = (message: string) => ({ success: false, error: message });
const callCount = () => prismaOf(app).call.count();
const stored = (res: Awaited<ReturnType<typeof trigger>>) =>
  prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });

/** An agency whose default agent has a window open all day and the policy given. */
async function agencyWith(policy: 'queue' | 'reject', name: string): Promise<Tenant> {
  return createTenant(app.storage, { name, windows: ['daily 00:00-24:00'], outsideWindow: policy });
}

describe('recipient_region', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(app.storage, { name: 'Region Agency' });
  });

  it('is normalised and stored with the rules off (the default), and is in the call view every event carries', async () => {
    for (const [given, kept] of [
      ['us-fl', 'US-FL'],
      [' CA-QC ', 'CA-QC'],
      ['US', 'US'],
      ['us-pr', 'US-PR'],
    ]) {
      const res = await trigger(app, tenant.key, { phone_number: CALIFORNIA, recipient_region: given });
      expect(res.statusCode, `${given}: ${res.body}`).toBe(200);
      const call = await stored(res);
      expect(call.recipientRegion).toBe(kept);
      expect(callView((await app.storage.calls.findCallById(call.id))!)).toMatchObject({
        recipient_region: kept,
        consent: null,
        compliance: null,
      });
    }
  });

  const refused: [string, unknown, string][] = [
    ['an unknown subdivision', 'US-XX', RECIPIENT_REGION_MESSAGE],
    ['a state without its country', 'FL', RECIPIENT_REGION_MESSAGE],
    ['a region of another country', 'GB-LND', RECIPIENT_REGION_MESSAGE],
    ['a country the rules do not know', 'MX', RECIPIENT_REGION_MESSAGE],
    ['an underscore for the dash', 'US_FL', RECIPIENT_REGION_MESSAGE],
    ['blanks only', '   ', RECIPIENT_REGION_MESSAGE],
    ['an inner control character', 'US-\u0007FL', RECIPIENT_REGION_MESSAGE],
    ['a zero-width space', 'US-\u200bFL', RECIPIENT_REGION_MESSAGE],
    ['an empty string', '', 'recipient_region must not be empty'],
    ['11 characters', 'US-FL-MIAMI', 'recipient_region must be at most 10 characters'],
    ['a huge string', 'US-FL'.repeat(5000), 'recipient_region must be at most 10 characters'],
    ['a number', 12, 'recipient_region must be a string'],
    ['an object', { region: 'US-FL' }, 'recipient_region must be a string'],
    ['an array', ['US-FL'], 'recipient_region must be a string'],
    ['null', null, 'recipient_region must be a string'],
    ['NUL', 'US-FL\u0000', 'recipient_region '],
  ];
  for (const [what, region, message] of refused) {
    it(`${what}: 400 naming the field, nothing stored`, async () => {
      const before = await callCount();
      const res = await trigger(app, tenant.key, { phone_number: CALIFORNIA, recipient_region: region });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ error: string }>().error.startsWith(message), res.body).toBe(true);
      expect(await callCount()).toBe(before);
    });
  }

  it('an unknown region is refused before the agent is read (an unknown agent_id does not change the answer)', async () => {
    const res = await trigger(app, tenant.key, {
      phone_number: CALIFORNIA,
      recipient_region: 'US-XX',
      agent_id: '0190a0b0-0000-7000-8000-00000000dead',
    });
    expect(res.json()).toEqual(error(RECIPIENT_REGION_MESSAGE));
  });
});

describe('the reject policy under the calling rules', () => {
  it('refuses a number whose place is closed now (400, nothing stored) and accepts one that is open', async () => {
    const agency = await agencyWith('reject', 'Reject Agency');
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    now = FLORIDA_CLOSED;
    const before = await callCount();
    const res = await trigger(app, agency.key, { phone_number: FLORIDA });
    expect([res.statusCode, res.json()]).toEqual([400, error(COMPLIANCE_ERRORS.outsideHours)]);
    expect(errorMessage('OUTSIDE_PERMITTED_HOURS')).toBe(COMPLIANCE_ERRORS.outsideHours);
    expect(await callCount()).toBe(before);
    expect((await trigger(app, agency.key, { phone_number: CALIFORNIA })).statusCode).toBe(200);
  });

  it('a declared region stricter than the number’s own is checked too', async () => {
    const agency = await agencyWith('reject', 'Declared Region Agency');
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    now = FLORIDA_CLOSED;
    const res = await trigger(app, agency.key, { phone_number: CALIFORNIA, recipient_region: 'US-FL' });
    expect(res.json()).toEqual(error(COMPLIANCE_ERRORS.outsideHours));
    expect((await trigger(app, agency.key, { phone_number: CALIFORNIA, recipient_region: 'US-CA' })).statusCode).toBe(
      200,
    );
  });

  it('reads the dial moment: scheduled_at when given, else now', async () => {
    const agency = await agencyWith('reject', 'Scheduled Agency');
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    now = FLORIDA_CLOSED;
    // Closed now, open at the time asked for (Tuesday 09:00 in Miami): accepted, and it waits until then.
    const later = await trigger(app, agency.key, { phone_number: FLORIDA, scheduled_at: '2054-11-24T09:00:00-05:00' });
    expect(later.statusCode, later.body).toBe(200);
    expect((await stored(later)).notBefore.toISOString()).toBe('2054-11-24T14:00:00.000Z');
    // Open now (Monday 10:00 in Miami), closed at the time asked for (Monday 20:00, the end of Florida's hours).
    now = new Date('2054-11-23T15:00:00Z');
    const closing = await trigger(app, agency.key, {
      phone_number: FLORIDA,
      scheduled_at: '2054-11-23T20:00:00-05:00',
    });
    expect(closing.json()).toEqual(error(COMPLIANCE_ERRORS.outsideHours));
    // One minute before: allowed.
    const before = await trigger(app, agency.key, { phone_number: FLORIDA, scheduled_at: '2054-11-23T19:59:00-05:00' });
    expect(before.statusCode).toBe(200);
  });

  it('queue accepts the same trigger (the dispatcher holds it); the rules off or switched off refuse nothing', async () => {
    const queue = await agencyWith('queue', 'Queue Agency');
    await storeAgencyCallingRules(prismaOf(app), queue.accountId, {});
    const reject = await agencyWith('reject', 'Rules Off Agency');
    now = FLORIDA_CLOSED;
    expect((await trigger(app, queue.key, { phone_number: FLORIDA })).statusCode).toBe(200);
    // Never set (null): off.
    expect((await trigger(app, reject.key, { phone_number: FLORIDA })).statusCode).toBe(200);
    // Stored but switched off.
    await storeAgencyCallingRules(prismaOf(app), reject.accountId, { enabled: false });
    expect((await trigger(app, reject.key, { phone_number: FLORIDA })).statusCode).toBe(200);
  });

  it('a change of the settings applies to the next trigger of the same key (nothing cached)', async () => {
    const agency = await agencyWith('reject', 'Switching Agency');
    now = FLORIDA_CLOSED;
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).statusCode).toBe(200);
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).statusCode).toBe(400);
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, null);
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).statusCode).toBe(200);
  });

  it('unreadable stored settings read as on: the hours are checked', async () => {
    const agency = await agencyWith('reject', 'Unreadable Agency');
    await storeCallingRulesAsIs(prismaOf(app), agency.accountId, { enabled: 'maybe', rule_sets: 'all' });
    now = FLORIDA_CLOSED;
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).json()).toEqual(
      error(COMPLIANCE_ERRORS.outsideHours),
    );
  });

  it("the agent's own window is answered first, and the do-not-call list after", async () => {
    const agency = await createTenant(app.storage, {
      name: 'Order Agency',
      windows: ['mon-fri 09:00-17:00'],
      timezone: 'America/Los_Angeles',
      outsideWindow: 'reject',
    });
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    now = FLORIDA_CLOSED; // 17:30 in Los Angeles: the agent's window has closed too
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).json()).toEqual(
      error(errorMessage('OUTSIDE_CALLING_WINDOW')),
    );
    await updateAgentSettings(app.storage, agency.agentId, { windows: ['daily 00:00-24:00'] });
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).json()).toEqual(
      error(COMPLIANCE_ERRORS.outsideHours),
    );
    await insertDoNotCallEntry(prismaOf(app), {
      data: { accountId: agency.accountId, phoneNumber: FLORIDA, addedBy: 'operator' },
    });
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).json()).toEqual(
      error(COMPLIANCE_ERRORS.outsideHours),
    );
    expect((await trigger(app, agency.key, { phone_number: CALIFORNIA })).statusCode).toBe(200);
  });

  it("a client's narrower hours: for its own key, and for its agency's key on the client's agent", async () => {
    const agency = await agencyWith('reject', 'Narrow Agency');
    const client = await createClientTenant(app.storage, agency.accountId, {
      name: 'Narrow Client',
      windows: ['daily 00:00-24:00'],
      outsideWindow: 'reject',
    });
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, {});
    const officeHours = { start: '10:00', end: '18:00' };
    await storeCallingRulesAsIs(prismaOf(app), client.accountId, {
      own_rules: [
        {
          name: 'Office hours',
          applies_to: ['automated'],
          hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, officeHours])),
          days_not_allowed: [],
          holidays: [],
        },
      ],
    });
    now = new Date('2054-11-23T23:30:00Z'); // Monday 18:30 in Miami: Florida allows it, the client's hours do not
    expect((await trigger(app, client.key, { phone_number: FLORIDA })).json()).toEqual(
      error(COMPLIANCE_ERRORS.outsideHours),
    );
    expect((await trigger(app, agency.key, { phone_number: FLORIDA })).statusCode).toBe(200);
    const onClientAgent = await trigger(app, agency.key, { phone_number: FLORIDA, agent_id: client.agentId });
    expect(onClientAgent.json()).toEqual(error(COMPLIANCE_ERRORS.outsideHours));
    // An agency's key on a client's agent that queues: accepted, the client's hours not even read.
    const queued = await createAgent(app.storage, {
      accountId: client.accountId,
      name: 'Client queue',
      phone: '+14155550177',
      now: app.now(),
    });
    expect((await trigger(app, agency.key, { phone_number: FLORIDA, agent_id: queued.id })).statusCode).toBe(200);
  });

  it("another agency's rules never apply (tenancy)", async () => {
    const strict = await agencyWith('reject', 'Strict Agency');
    const other = await agencyWith('reject', 'Other Agency');
    await storeAgencyCallingRules(prismaOf(app), strict.accountId, { consent_required: true });
    now = FLORIDA_CLOSED;
    expect((await trigger(app, other.key, { phone_number: FLORIDA })).statusCode).toBe(200);
    expect((await trigger(app, strict.key, { phone_number: FLORIDA })).statusCode).toBe(400);
  });
});
