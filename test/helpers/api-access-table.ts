// The API-access table (agency or client, the agency's plan, the account's switch, the agency's): every case, with
// what the rule of src/domain/api-access.ts decides, for the tests that check a reader of it agrees.
import { apiAccessOn, governingPlan, planAllowsApi } from '../../src/domain/api-access.js';

export interface ApiAccessCase {
  kind: 'agency' | 'client';
  plan: 'agency' | 'starter';
  /** The account's own switch. */
  accountSwitch: boolean;
  /** The agency's switch, for a client (null for an agency: its switch is accountSwitch). */
  agencySwitch: boolean | null;
}

export const API_ACCESS_CASES: ApiAccessCase[] = (['agency', 'starter'] as const).flatMap((plan) =>
  [true, false].flatMap((accountSwitch) => [
    { kind: 'agency' as const, plan, accountSwitch, agencySwitch: null },
    ...[true, false].map((agencySwitch) => ({ kind: 'client' as const, plan, accountSwitch, agencySwitch })),
  ]),
);

/** What the rule answers a key of this account: in, refused by a switch (checked first), or by the plan. */
export function verdictOf(c: ApiAccessCase): 'in' | 'switched off' | 'plan' {
  if (!apiAccessOn(c.accountSwitch, c.agencySwitch)) return 'switched off';
  const plan = c.kind === 'agency' ? governingPlan(c.plan, null) : governingPlan(null, c.plan);
  return planAllowsApi(plan) ? 'in' : 'plan';
}

export const caseName = (c: ApiAccessCase) =>
  `${c.kind} on ${c.plan}, switch ${c.accountSwitch ? 'on' : 'off'}` +
  (c.agencySwitch === null ? '' : `, agency's ${c.agencySwitch ? 'on' : 'off'}`);
