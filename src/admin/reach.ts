// What an admin function's actor reaches: the one tenancy rule (src/domain/tenancy.ts) applied where the data is read.
// A user reaches the accounts of their scope; the operator (callctl) and the service reach every account. An object
// outside the actor's reach is answered with the same AdminError as a missing one, so that a dashboard page says 404
// and callctl its usual message, never whether another tenant has it.
import { inScope, type Scope, type ScopedAccount } from '../domain/tenancy.js';
import type { Repositories, Storage } from '../storage/index.js';
import { isUuid } from '../../schemas/uuid.js';
import type { Actor } from './audit.js';
import { AdminError } from './errors.js';

/**
 * The scope `actor` is held to: a user's; null (every account) for the operator and the service. No actor at all is
 * the operator making data without an audit entry (test fixtures, the bench): callctl and the dashboard always give
 * one.
 */
export function scopeOfActor(actor: Actor | undefined): Scope | null {
  return actor?.kind === 'user' ? actor.scope : null;
}

/**
 * Whether `actor` reaches `account` (its id and its agency: for an agent, an endpoint or a user, those of its owner;
 * an agency's own `agencyId` may be null or its own id).
 */
export function reaches(actor: Actor | undefined, account: ScopedAccount): boolean {
  const scope = scopeOfActor(actor);
  return scope === null || inScope(scope, account);
}

/** The account, or an AdminError when there is no such account or it is outside the actor's reach. */
export async function findAccount(storage: Repositories, accountId: string, actor: Actor | undefined) {
  const account = isUuid(accountId) ? await storage.accounts.findAccountById(accountId) : null;
  if (!account || !reaches(actor, account)) throw new AdminError(`No account ${accountId}`);
  return account;
}

/**
 * The agency of `account` (itself for an agency), read whatever the actor reaches: a client's users see what their
 * agency decided for them (its calling rules, its carrier).
 */
export async function agencyOf(
  storage: Repositories,
  account: Awaited<ReturnType<typeof findAccount>>,
): Promise<Awaited<ReturnType<typeof findAccount>>> {
  if (account.kind === 'agency' || account.agencyId === null) return account;
  const agency = await storage.accounts.findAccountById(account.agencyId);
  if (!agency) throw new AdminError(`No agency for account ${account.id}`);
  return agency;
}

/** The agent, or an AdminError when there is no such agent or its owner is outside the actor's reach. */
export async function findAgent(storage: Repositories, agentId: string, actor: Actor | undefined) {
  const agent = isUuid(agentId) ? await storage.accounts.findAgentById(agentId) : null;
  if (!agent || !reaches(actor, { id: agent.accountId, agencyId: agent.agencyId }))
    throw new AdminError(`No agent ${agentId}`);
  return agent;
}

/** The user, or an AdminError when there is no such user or their account is outside the actor's reach. */
export async function findUser(storage: Storage, userId: string, actor: Actor) {
  const scope = scopeOfActor(actor);
  // A user row does not carry its agency: a user actor's read is the dashboard's scoped one.
  const user = !isUuid(userId)
    ? null
    : scope === null
      ? await storage.users.findUserById(userId)
      : ((await storage.scoped.findUserInScope(scope, userId))?.user ?? null);
  if (!user) throw new AdminError(`No user ${userId}`);
  return user;
}
