// The one tenancy rule: which accounts a principal may see and act on. An agency: itself and all its clients; a
// client: itself alone. A dashboard user's scope is their account's; an API key's agents are those of its account's
// scope. Anything outside a scope is answered as if it did not exist (404), never 403.

/** The accounts a viewer (or an API key's account) may see: `accountId` and, for an agency, every client of it. */
export interface Scope {
  accountId: string;
  kind: 'agency' | 'client';
}

/** An account as tenancy needs it: its id and its agency (null for an agency). */
export interface ScopedAccount {
  id: string;
  agencyId: string | null;
}

/** The scope of a signed-in user: their account's. */
export function scopeOf(viewer: { accountId: string; accountKind: 'agency' | 'client' }): Scope {
  return { accountId: viewer.accountId, kind: viewer.accountKind };
}

/** The scope of an account itself (whose agents its API key may use). */
export function scopeOfAccount(account: { id: string; kind: 'agency' | 'client' }): Scope {
  return { accountId: account.id, kind: account.kind };
}

export function inScope(scope: Scope, account: ScopedAccount): boolean {
  if (account.id === scope.accountId) return true;
  return scope.kind === 'agency' && account.agencyId === scope.accountId;
}

/** Agency-only pages (clients, the agency's user actions): a client user gets 404 there. */
export function isAgencyScope(scope: Scope): boolean {
  return scope.kind === 'agency';
}

export interface TenantAccount {
  id: string;
  kind: 'agency' | 'client';
}
export interface TenantAgent {
  accountId: string;
  /** The agency at the top of the agent's owner. */
  agencyId: string;
}

/** Whether a key of `account` may use `agent`: the agent's owner is in the account's scope. */
export function canUseAgent(account: TenantAccount, agent: TenantAgent): boolean {
  return inScope(scopeOfAccount(account), { id: agent.accountId, agencyId: agent.agencyId });
}
