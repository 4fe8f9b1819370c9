// The calling rules before every attempt (issue 48), with the simulated dialer and an injected clock: a call outside
// the hours where its callee may be waits (held_by calling_rules, not_before the opening) with its attempt's record
// and reasons, and is dialled at the opening with an 'allowed' record in the same place; a client's narrower hours
// and a declared region stricter than the number's hold it too, a region changed after acceptance from the next
// attempt on; with the rules off nothing is recorded or held, and the dial is in the ledger all the same.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ComplianceRecord } from '../../schemas/compliance.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';
import { RULES_ON, storeCallingRules, storeRecipientRegion } from '../helpers/seed/calling-rules.js';
import { setCallingRules } from '../../src/admin/calling-rules.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

/** A Florida number (305, Miami: America/New_York only). */
const FLORIDA = '+13055550123';
/** Always busy (the simulated dialer); area code 500 is in every US zone. */
const BUSY = '+15005550001';
/** Wednesday 2056-01-12 07:42 in New York (EST). */
const EARLY = new Date('2056-01-12T12:42:00Z');
/** 08:00 in New York: Florida's hours (8:00-20:00) open. */
const OPENING = new Date('2056-01-12T13:00:00Z');

async function setUp(start: Date) {
  const clock = { now: start };
  const dialLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-rules-')), 'dials.log');
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120', SIMULATED_DIAL_LOG: dialLog },
  });
  const agency = await createTenant(app.storage);
  const at = async (time: Date) => {
    clock.now = time;
    await app.dispatcher!.settle();
  };
  const dials = () => (fs.existsSync(dialLog) ? fs.readFileSync(dialLog, 'utf8').split('\n').filter(Boolean) : []);
  return { app, agency, at, dials };
}

const callOf = (app: App, id: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id } });
const ledgerOf = (app: App, callId: string) =>
  prismaOf(app).calleeDial.findMany({ where: { callId }, orderBy: { attempt: 'asc' } });

describe('calling rules before each attempt', () => {
  it('holds a call outside the hours where its callee may be, with its reasons, and dials it at the opening', async () => {
    const { app, agency, at, dials } = await setUp(EARLY);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const id = callIdOf(await trigger(app, agency.key, { phone_number: FLORIDA }));
    await at(EARLY);

    const held = await callOf(app, id);
    expect(held).toMatchObject({ status: 'initiated', heldBy: 'calling_rules', notBefore: OPENING });
    expect(held.compliance).toEqual([
      {
        attempt: 1,
        checked_at: EARLY.toISOString(),
        verdict: 'held',
        reasons: ['US-FL: 8:00–20:00, 07:42 now in America/New_York', 'US: 8:00–21:00, 07:42 now in America/New_York'],
        rules_version: expect.any(String) as string,
        candidates: [
          {
            region: 'US-FL',
            timezone: 'America/New_York',
            local_time: '2056-01-12 07:42',
            allowed: false,
            rule: 'us-fl-501-616-6',
          },
        ],
        cap: null,
        do_not_call: 'clear',
        consent: 'not_required',
      },
    ]);
    expect(dials()).toEqual([]);
    expect(await ledgerOf(app, id)).toEqual([]);

    // A minute before, still held; at the opening, dialled: the attempt's record replaced, no longer held.
    await at(new Date(OPENING.getTime() - 60_000));
    expect((await callOf(app, id)).status).toBe('initiated');
    await at(OPENING);
    const dialled = await callOf(app, id);
    expect(dialled).toMatchObject({ status: 'dialing', heldBy: null, startedAt: OPENING });
    expect(dialled.compliance).toEqual([
      expect.objectContaining({
        attempt: 1,
        checked_at: OPENING.toISOString(),
        verdict: 'allowed',
        reasons: [],
        candidates: [expect.objectContaining({ region: 'US-FL', local_time: '2056-01-12 08:00', allowed: true })],
        // Florida's own cap (three per 24 hours), counted across the agency: no dial yet.
        cap: { count: 0, limit: 3, window: '24h', scope: 'agency' },
        do_not_call: 'clear',
        consent: 'not_required',
      }),
    ]);
    // What the trigger's payload publishes: each record as the schema has it.
    for (const record of [...(held.compliance as unknown[]), ...(dialled.compliance as unknown[])])
      expect([...Value.Errors(ComplianceRecord, record)]).toEqual([]);
    expect(dials()).toHaveLength(1);
    expect(await ledgerOf(app, id)).toMatchObject([{ attempt: 1, accountId: agency.accountId, dialedAt: OPENING }]);
  });

  it('with the rules off (never set, or switched off) records nothing and holds nothing; the dial is in the ledger', async () => {
    const { app, agency, at } = await setUp(EARLY);
    const never = callIdOf(await trigger(app, agency.key, { phone_number: FLORIDA }));
    await at(EARLY);
    await storeCallingRules(prismaOf(app), agency.accountId, { ...RULES_ON, enabled: false });
    const off = callIdOf(await trigger(app, agency.key, { phone_number: '+13055550124' }));
    await at(EARLY);
    for (const id of [never, off]) {
      expect(await callOf(app, id)).toMatchObject({ status: 'dialing', heldBy: null, compliance: null });
      expect(await ledgerOf(app, id)).toMatchObject([{ attempt: 1, agencyId: agency.accountId, dialedAt: EARLY }]);
    }
  });

  it('dials a held call at its time once the rules are switched off, no longer shown as held', async () => {
    const { app, agency, at } = await setUp(EARLY);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const id = callIdOf(await trigger(app, agency.key, { phone_number: FLORIDA }));
    await at(EARLY);
    expect(await callOf(app, id)).toMatchObject({ heldBy: 'calling_rules' });
    await storeCallingRules(prismaOf(app), agency.accountId, { ...RULES_ON, enabled: false });
    await at(OPENING);
    const dialled = await callOf(app, id);
    expect(dialled).toMatchObject({ status: 'dialing', heldBy: null });
    // The hold's record stays: it is what was decided then.
    expect((dialled.compliance as { verdict: string }[]).map((r) => r.verdict)).toEqual(['held']);
  });

  it('dials a held call at once when the agency switches the rules off (dashboard or callctl)', async () => {
    const { app, agency, at } = await setUp(EARLY);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const id = callIdOf(await trigger(app, agency.key, { phone_number: FLORIDA }));
    await at(EARLY);
    expect(await callOf(app, id)).toMatchObject({ status: 'initiated', heldBy: 'calling_rules' });
    const later = new Date(EARLY.getTime() + 60_000);
    await setCallingRules(app.storage, { accountId: agency.accountId, settings: { enabled: false }, now: later });
    expect(await callOf(app, id)).toMatchObject({ status: 'initiated', heldBy: null, notBefore: later });
    await at(later);
    expect(await callOf(app, id)).toMatchObject({ status: 'dialing', heldBy: null });
  });

  it('records consent on record, or missing where the agency came to require it after acceptance', async () => {
    const { app, agency, at } = await setUp(EARLY);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const consent = { type: 'express_written', obtained_at: '2055-12-01T10:00:00Z', source: 'Web form' };
    const [given, none] = [
      callIdOf(await trigger(app, agency.key, { phone_number: FLORIDA, consent })),
      callIdOf(await trigger(app, agency.key, { phone_number: '+13055550124' })),
    ];
    // Required from now on: a trigger without it is refused, the call accepted before is dialled and says so.
    await storeCallingRules(prismaOf(app), agency.accountId, { ...RULES_ON, consent_required: true });
    await at(EARLY);
    await at(OPENING);
    const consentOf = async (id: string) =>
      ((await callOf(app, id)).compliance as { attempt: number; verdict: string; consent: string }[]).map((r) => [
        r.verdict,
        r.consent,
      ]);
    expect(await consentOf(given)).toEqual([['allowed', 'on_record']]);
    expect(await consentOf(none)).toEqual([['allowed', 'missing']]);
  });

  it('holds a client’s call by the client’s own narrower hours beside its agency’s', async () => {
    // 09:30 in New York: the law allows it, the client's 10:00-18:00 does not.
    const nineThirty = new Date('2056-01-12T14:30:00Z');
    const { app, agency, at } = await setUp(nineThirty);
    const client = await createClientTenant(app.storage, agency.accountId);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const every = Object.fromEntries(
      ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, { start: '10:00', end: '18:00' }]),
    );
    await storeCallingRules(prismaOf(app), client.accountId, {
      own_rules: [
        { name: 'Client hours', applies_to: ['automated'], hours: every, days_not_allowed: [], holidays: [] },
      ],
    });
    const id = callIdOf(await trigger(app, client.key, { phone_number: FLORIDA }));
    const other = callIdOf(await trigger(app, agency.key, { phone_number: '+13055550124' }));
    await at(nineThirty);
    const held = await callOf(app, id);
    expect(held).toMatchObject({
      status: 'initiated',
      heldBy: 'calling_rules',
      notBefore: new Date('2056-01-12T15:00:00Z'),
    });
    expect((held.compliance as { reasons: string[] }[])[0]!.reasons).toEqual([
      'Agency rule "Client hours": 10:00–18:00, 09:30 now in America/New_York',
    ]);
    // The agency's own call is not bound by its client's hours.
    expect(await callOf(app, other)).toMatchObject({ status: 'dialing', heldBy: null });
  });

  it('holds the next attempt by a declared region stricter than the number’s, set after acceptance', async () => {
    // 19:40 in New York, 14:40 in Honolulu: every US zone allows attempt 1.
    const start = new Date('2056-01-13T00:40:00Z');
    const { app, agency, at } = await setUp(start);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    await forceAgent(prismaOf(app), agency.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [30] });
    const id = callIdOf(await trigger(app, agency.key, { phone_number: BUSY }));
    await at(start);
    expect(await callOf(app, id)).toMatchObject({ status: 'dialing', attempt: 1 });
    await storeRecipientRegion(prismaOf(app), id, 'US-FL');
    // Busy after the ring; attempt 2 is due 30 minutes later, at 20:10 in New York: past Florida's 20:00.
    await at(new Date(start.getTime() + 30));
    const due = (await callOf(app, id)).notBefore;
    await at(due);
    const held = await callOf(app, id);
    // Allowed again when every candidate allows: 08:00 in Honolulu and Adak (18:00Z), within Florida's hours.
    expect(held).toMatchObject({
      status: 'initiated',
      attempt: 2,
      heldBy: 'calling_rules',
      notBefore: new Date('2056-01-13T18:00:00Z'),
    });
    const records = held.compliance as { attempt: number; verdict: string; reasons: string[] }[];
    expect(records.map((r) => [r.attempt, r.verdict])).toEqual([
      [1, 'allowed'],
      [2, 'held'],
    ]);
    expect(records[1]!.reasons).toContain('US-FL: 8:00–20:00, 20:10 now in America/New_York');
    expect(await ledgerOf(app, id)).toHaveLength(1);
  });
});
