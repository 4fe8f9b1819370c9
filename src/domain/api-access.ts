// The API-access rule, written once: a key works when its account's switch is on, its agency's switch too (an
// agency's switch covers its clients), and the agency is on the plan that includes the API. The key lookup
// (src/storage/key-lookup.ts), the access plugin and the dashboard all decide with these functions. Who may turn a switch:
// whoever manages the account (src/domain/tenancy.ts), its own or, for an agency user, a client's.

/** The plan that includes API access (a client has its agency's plan). */
export const REQUIRED_PLAN = 'agency';

/** The plan an account is on: an agency's own, a client's agency's (only agencies carry one). */
export function governingPlan<P extends string>(accountPlan: P | null, agencyPlan: P | null): P | null {
  return accountPlan ?? agencyPlan;
}

export function planAllowsApi(plan: string | null | undefined): boolean {
  return plan === REQUIRED_PLAN;
}

/** Which switch keeps an account's key out: its own, its agency's (which overrides it), both, or none (null). */
export type SwitchedOffBy = 'account' | 'agency' | 'both';

/** `agencySwitch`: the agency's switch for a client, null for an agency (its own switch is `accountSwitch`). */
export function switchedOffBy(accountSwitch: boolean, agencySwitch: boolean | null): SwitchedOffBy | null {
  const agencyOff = agencySwitch === false;
  if (accountSwitch) return agencyOff ? 'agency' : null;
  return agencyOff ? 'both' : 'account';
}

/** Whether the switches let the account's key in: its own, and (for a client) its agency's, which overrides it. */
export function apiAccessOn(accountSwitch: boolean, agencySwitch: boolean | null): boolean {
  return switchedOffBy(accountSwitch, agencySwitch) === null;
}
