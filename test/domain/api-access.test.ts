// The API-access rule (src/domain/api-access.ts) as a table: agency or client, the agency's plan, the account's
// switch and the agency's. The key lookup and the dashboard are checked against the same rule in
// test/routes/trigger-contract.test.ts and test/dashboard/clients.test.ts.
import { describe, expect, it } from 'vitest';
import { apiAccessOn, governingPlan, planAllowsApi, switchedOffBy } from '../../src/domain/api-access.js';
import { API_ACCESS_CASES, caseName, verdictOf, type ApiAccessCase } from '../helpers/api-access-table.js';

// [kind, plan, account's switch, agency's switch (null: an agency), verdict]
const TABLE: [ApiAccessCase['kind'], ApiAccessCase['plan'], boolean, boolean | null, string][] = [
  ['agency', 'agency', true, null, 'in'],
  ['agency', 'agency', false, null, 'switched off'],
  ['agency', 'starter', true, null, 'plan'],
  ['agency', 'starter', false, null, 'switched off'],
  ['client', 'agency', true, true, 'in'],
  ['client', 'agency', true, false, 'switched off'],
  ['client', 'agency', false, true, 'switched off'],
  ['client', 'agency', false, false, 'switched off'],
  ['client', 'starter', true, true, 'plan'],
  ['client', 'starter', true, false, 'switched off'],
  ['client', 'starter', false, true, 'switched off'],
  ['client', 'starter', false, false, 'switched off'],
];

describe('the API-access rule', () => {
  it.each(TABLE)('%s on the %s plan, switch %s, agency switch %s: %s', (kind, plan, own, agency, verdict) => {
    expect(verdictOf({ kind, plan, accountSwitch: own, agencySwitch: agency })).toBe(verdict);
  });

  it('the table covers every case the tests of its readers use', () => {
    expect(API_ACCESS_CASES.map(caseName).sort()).toEqual(
      TABLE.map(([kind, plan, accountSwitch, agencySwitch]) =>
        caseName({ kind, plan, accountSwitch, agencySwitch }),
      ).sort(),
    );
  });

  it("names the switch that keeps a key out: the account's, the agency's (overriding the account's), both", () => {
    expect(switchedOffBy(true, null)).toBeNull();
    expect(switchedOffBy(true, true)).toBeNull();
    expect(switchedOffBy(false, null)).toBe('account');
    expect(switchedOffBy(false, true)).toBe('account');
    expect(switchedOffBy(true, false)).toBe('agency');
    expect(switchedOffBy(false, false)).toBe('both');
    expect(apiAccessOn(true, null)).toBe(true);
    expect(apiAccessOn(true, false)).toBe(false);
  });

  it("takes an agency's own plan and a client's agency's; only the agency plan includes the API", () => {
    expect(governingPlan('agency', null)).toBe('agency');
    expect(governingPlan(null, 'starter')).toBe('starter');
    expect(governingPlan(null, null)).toBeNull();
    expect(planAllowsApi('agency')).toBe(true);
    expect(planAllowsApi('starter')).toBe(false);
    expect(planAllowsApi(null)).toBe(false);
    expect(planAllowsApi(undefined)).toBe(false);
  });
});
