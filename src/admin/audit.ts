// The audit log's writer and its Actor type, shared by every admin module that changes state.
import type { AuditAction } from '../domain/audit-actions.js';
import type { Scope } from '../domain/tenancy.js';
import type { Repositories, AuditActor } from '../storage/index.js';
import { AdminError } from './errors.js';
import { isUuid } from '../../schemas/uuid.js';

/**
 * Who acts and what they reach: the operator (callctl) or the service itself, every account; a signed-in user (with
 * the request's IP), the accounts of their scope (src/admin/reach.ts applies it).
 */
export type Actor =
  | { kind: Extract<AuditActor, 'operator' | 'service' | 'agent'> }
  | { kind: 'user'; userId: string; ip: string | null; scope: Scope };

/**
 * Who an audit entry names: an Actor, or a user acting on their own record alone (signing in, their password, their
 * sessions, a reset link they asked for), who is not held to a scope there.
 */
export type AuditedActor = Actor | { kind: 'user'; userId: string; ip: string | null };

/** The account and its agency, or an AdminError when there is no such account. */
export async function accountAndAgency(storage: Repositories, accountId: string) {
  const found = isUuid(accountId) ? await storage.accounts.findAccountAndAgency(accountId) : null;
  if (!found) throw new AdminError(`No account ${accountId}`);
  return found;
}

/** Writes one audit entry for `accountId` (its agency is looked up), in the caller's transaction when given one. */
export async function audit(
  storage: Repositories,
  accountId: string,
  actor: AuditedActor,
  action: AuditAction,
  at: Date,
  detail: Record<string, unknown> = {},
) {
  await storage.audit.insertAuditEntry({
    ...(await accountAndAgency(storage, accountId)),
    actorKind: actor.kind,
    actorUserId: actor.kind === 'user' ? actor.userId : null,
    ip: actor.kind === 'user' ? actor.ip : null,
    action,
    detail,
    at,
  });
}
