// Who may use which agent: an account its own agents; an agency also its clients' agents.
export interface TenantAccount {
  id: string;
  kind: 'agency' | 'client';
}
export interface TenantAgent {
  accountId: string;
  agencyId: string;
}

export function canUseAgent(account: TenantAccount, agent: TenantAgent): boolean {
  if (agent.accountId === account.id) return true;
  return account.kind === 'agency' && agent.agencyId === account.id;
}
