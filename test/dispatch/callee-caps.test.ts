// Caps per callee before every attempt (issue 48), with the simulated dialer and an injected clock: retries count (a
// cap switched on after acceptance counts the dials before it), a capped call waits until the dial that must leave
// the window leaves it, and is dialled then; the scope is the agency (all its clients) or the account, as the agency
// chose; two calls to one number in one claim do not both pass at one below the cap; a call refused by a do-not-call
// list gets its 'refused' record; the ledger keeps 8 days.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgencyCallingRulesData } from '../../schemas/compliance.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { forceAgent, insertDoNotCallEntry } from '../helpers/seed.js';
import { insertPastDials, RULES_ON, storeCallingRules } from '../helpers/seed/calling-rules.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

/** Always busy (the simulated dialer); area code 500 is in every US zone, all of which allow 20:00Z in winter. */
const BUSY = '+15005550001';
const NUMBER = '+13055550123';
/** Thursday 2056-01-13 20:00Z: 15:00 in New York, 10:00 in Honolulu. */
const T = new Date('2056-01-13T20:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const later = (time: Date, ms: number) => new Date(time.getTime() + ms);
const capped = (perDay: number, scope: 'agency' | 'account'): AgencyCallingRulesData => ({
  ...RULES_ON,
  cap: { per_24h: perDay, per_7d: null, scope },
});

async function setUp(start: Date) {
  const clock = { now: start };
  const dialLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-caps-')), 'dials.log');
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120', SIMULATED_DIAL_LOG: dialLog },
  });
  const agency = await createTenant(app.storage);
  const at = async (time: Date) => {
    clock.now = time;
    await app.dispatcher!.settle();
  };
  return { app, agency, at };
}

const callOf = (app: App, id: string) => prismaOf(app).call.findUniqueOrThrow({ where: { id } });
const verdicts = (compliance: unknown) =>
  (compliance as { attempt: number; verdict: string }[]).map((r) => [r.attempt, r.verdict]);
const reasonsOf = (compliance: unknown) => (compliance as { reasons: string[] }[]).at(-1)!.reasons;

describe('caps per callee', () => {
  it('counts retries, and dials before the cap was on: the third attempt waits 24 hours from the first', async () => {
    const { app, agency, at } = await setUp(T);
    await forceAgent(prismaOf(app), agency.agentId, { maxAttempts: 3, retryOn: ['busy'], retryWaitsMinutes: [30, 30] });
    const id = callIdOf(await trigger(app, agency.key, { phone_number: BUSY }));
    await at(T);
    expect(await callOf(app, id)).toMatchObject({ status: 'dialing', attempt: 1, compliance: null });
    // Switched on after acceptance and after the first dial: the next attempts are checked, the first dial counts.
    await storeCallingRules(prismaOf(app), agency.accountId, capped(2, 'agency'));
    await at(later(T, 30));
    const second = (await callOf(app, id)).notBefore;
    await at(second);
    expect(await callOf(app, id)).toMatchObject({ status: 'dialing', attempt: 2 });
    await at(later(second, 30));
    const third = (await callOf(app, id)).notBefore;
    await at(third);

    const held = await callOf(app, id);
    expect(held).toMatchObject({ status: 'initiated', attempt: 3, heldBy: 'cap', notBefore: later(T, 24 * HOUR) });
    expect(verdicts(held.compliance)).toEqual([
      [2, 'allowed'],
      [3, 'held'],
    ]);
    expect(reasonsOf(held.compliance)).toEqual([
      `2 dial attempts to this number in the last 24 hours (limit 2, agency cap); next at ${later(T, 24 * HOUR).toISOString()}`,
    ]);
    expect((held.compliance as { cap: unknown }[])[1]!.cap).toEqual({
      count: 2,
      limit: 2,
      window: '24h',
      scope: 'agency',
    });
    expect(await prismaOf(app).calleeDial.count({ where: { callId: id } })).toBe(2);

    // A millisecond before the first dial leaves the window the call is not due; then it is dialled.
    await at(later(T, 24 * HOUR - 1));
    expect((await callOf(app, id)).status).toBe('initiated');
    await at(later(T, 24 * HOUR));
    const dialled = await callOf(app, id);
    expect(dialled).toMatchObject({ status: 'dialing', attempt: 3, heldBy: null });
    expect(verdicts(dialled.compliance)).toEqual([
      [2, 'allowed'],
      [3, 'allowed'],
    ]);
    expect(await prismaOf(app).calleeDial.count({ where: { callId: id } })).toBe(3);
  });

  it('counts across the agency and all its clients, or per account, as the agency chose', async () => {
    const { app, agency, at } = await setUp(T);
    const other = await createTenant(app.storage, { name: 'Per-account agency' });
    const [a1, a2, b1, b2] = [
      await createClientTenant(app.storage, agency.accountId),
      await createClientTenant(app.storage, agency.accountId),
      await createClientTenant(app.storage, other.accountId),
      await createClientTenant(app.storage, other.accountId),
    ];
    await storeCallingRules(prismaOf(app), agency.accountId, { ...capped(1, 'agency'), rule_sets: [] });
    await storeCallingRules(prismaOf(app), other.accountId, { ...capped(1, 'account'), rule_sets: [] });
    // An hour ago, the first client of each agency dialled the number.
    await insertPastDials(prismaOf(app), [
      { agencyId: agency.accountId, accountId: a1.accountId, phoneNumber: NUMBER, dialedAt: later(T, -HOUR) },
      { agencyId: other.accountId, accountId: b1.accountId, phoneNumber: NUMBER, dialedAt: later(T, -HOUR) },
    ]);
    const ids = [];
    for (const client of [a2, b2, b1]) ids.push(callIdOf(await trigger(app, client.key, { phone_number: NUMBER })));
    await at(T);
    const [agencyWide, ownAccount, sameAccount] = await Promise.all(ids.map((id) => callOf(app, id)));
    const next = later(T, 23 * HOUR);
    expect(agencyWide).toMatchObject({ status: 'initiated', heldBy: 'cap', notBefore: next });
    expect(reasonsOf(agencyWide!.compliance)).toEqual([
      `1 dial attempt to this number in the last 24 hours (limit 1, agency cap); next at ${next.toISOString()}`,
    ]);
    expect(ownAccount).toMatchObject({ status: 'dialing', heldBy: null });
    expect((ownAccount!.compliance as { cap: unknown }[])[0]!.cap).toEqual({
      count: 0,
      limit: 1,
      window: '24h',
      scope: 'account',
    });
    expect(sameAccount).toMatchObject({ status: 'initiated', heldBy: 'cap', notBefore: next });
  });

  it('waits for enough dials to leave a cap lowered below the count, and for the weekly cap', async () => {
    const { app, agency, at } = await setUp(T);
    await storeCallingRules(prismaOf(app), agency.accountId, {
      ...RULES_ON,
      rule_sets: [],
      cap: { per_24h: 2, per_7d: 3, scope: 'agency' },
    });
    const dial = (phoneNumber: string, ago: number) => ({
      agencyId: agency.accountId,
      accountId: agency.accountId,
      phoneNumber,
      dialedAt: later(T, -ago),
    });
    const [daily, weekly] = ['+13055550131', '+13055550132'];
    // Five dials in the last 24 hours under a cap of two: three must leave, the third oldest (5 hours ago) last; and
    // under the weekly three, two more: the third oldest (10 hours ago) must leave the week. The later of the two.
    // Three in the last 7 days, none in the last 24 hours, under a weekly cap of three: the oldest must leave.
    await insertPastDials(prismaOf(app), [
      ...[20, 15, 10, 5, 1].map((h) => dial(daily, h * HOUR)),
      ...[6 * 24, 3 * 24, 2 * 24].map((h) => dial(weekly, h * HOUR)),
    ]);
    const ids = [];
    for (const phone of [daily, weekly]) ids.push(callIdOf(await trigger(app, agency.key, { phone_number: phone })));
    await at(T);
    const [d, w] = await Promise.all(ids.map((id) => callOf(app, id)));
    expect(d).toMatchObject({ heldBy: 'cap', notBefore: later(T, 158 * HOUR) });
    expect(reasonsOf(d!.compliance)).toEqual([
      `5 dial attempts to this number in the last 24 hours (limit 2, agency cap); next at ${later(T, 19 * HOUR).toISOString()}`,
      `5 dial attempts to this number in the last 168 hours (limit 3, agency cap); next at ${later(T, 158 * HOUR).toISOString()}`,
    ]);
    expect(w).toMatchObject({ heldBy: 'cap', notBefore: later(T, 24 * HOUR) });
    expect(reasonsOf(w!.compliance)).toEqual([
      `3 dial attempts to this number in the last 168 hours (limit 3, agency cap); next at ${later(T, 24 * HOUR).toISOString()}`,
    ]);
    expect((w!.compliance as { cap: unknown }[])[0]!.cap).toEqual({
      count: 3,
      limit: 3,
      window: '168h',
      scope: 'agency',
    });
  });

  it('lets one of two calls to one number in one claim through at one below the cap', async () => {
    // 07:30 in New York: both held by Florida's hours, then claimed together at 08:00.
    const early = new Date('2056-01-13T12:30:00Z');
    const opening = new Date('2056-01-13T13:00:00Z');
    const { app, agency, at } = await setUp(early);
    await storeCallingRules(prismaOf(app), agency.accountId, capped(1, 'agency'));
    const first = callIdOf(await trigger(app, agency.key, { phone_number: NUMBER }));
    const second = callIdOf(await trigger(app, agency.key, { phone_number: NUMBER }));
    await at(early);
    for (const id of [first, second]) expect(await callOf(app, id)).toMatchObject({ heldBy: 'calling_rules' });
    await at(opening);
    expect(await callOf(app, first)).toMatchObject({ status: 'dialing', heldBy: null });
    const held = await callOf(app, second);
    expect(held).toMatchObject({ status: 'initiated', heldBy: 'cap', notBefore: later(opening, 24 * HOUR) });
    expect(reasonsOf(held.compliance)).toEqual([
      `1 dial attempt to this number in the last 24 hours (limit 1, agency cap); next at ${later(opening, 24 * HOUR).toISOString()}`,
    ]);
    expect(await prismaOf(app).calleeDial.count({ where: { phoneNumber: NUMBER } })).toBe(1);
  });

  it('records a call refused by a do-not-call list as refused, and prunes the ledger past 8 days', async () => {
    // 07:30 in New York: held by Florida's hours, listed meanwhile, refused at the opening.
    const early = new Date('2056-01-13T12:30:00Z');
    const { app, agency, at } = await setUp(early);
    await storeCallingRules(prismaOf(app), agency.accountId, RULES_ON);
    const old = { agencyId: agency.accountId, accountId: agency.accountId, phoneNumber: BUSY };
    await insertPastDials(prismaOf(app), [
      { ...old, dialedAt: later(early, -8 * 24 * HOUR - 1) },
      { ...old, dialedAt: later(early, -8 * 24 * HOUR + 5 * MINUTE) },
    ]);
    const id = callIdOf(await trigger(app, agency.key, { phone_number: NUMBER }));
    await at(early);
    expect(await callOf(app, id)).toMatchObject({ heldBy: 'calling_rules' });
    // The housekeeping's sweep (once a minute) pruned what is older than 8 days.
    await at(later(early, 2 * MINUTE));
    const kept = await prismaOf(app).calleeDial.findMany({ where: { phoneNumber: BUSY } });
    expect(kept.map((d) => d.dialedAt)).toEqual([later(early, -8 * 24 * HOUR + 5 * MINUTE)]);
    // Listed by a write that ends no call: only the claim's check catches it.
    await insertDoNotCallEntry(prismaOf(app), {
      data: { accountId: agency.accountId, phoneNumber: NUMBER, addedBy: 'operator' },
    });
    await at(new Date('2056-01-13T13:00:00Z'));
    const refused = await callOf(app, id);
    expect(refused).toMatchObject({ status: 'failed', failureReason: 'do_not_call', heldBy: null });
    expect(refused.compliance).toEqual([
      expect.objectContaining({ attempt: 1, verdict: 'refused', do_not_call: 'listed', cap: null }),
    ]);
  });
});
