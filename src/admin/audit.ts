// The audit log's writer and its Actor type, shared by every admin module that changes state.
import type { AuditActor } from '../generated/prisma/enums.js';
import type { AuditAction } from '../domain/audit-actions.js';
import { isUuid } from '../domain/ids.js';
import { insertAuditEntry } from '../storage/audit.js';
import type { Db } from '../storage/db-types.js';
import { AdminError } from './errors.js';

/** Who acts: the operator (callctl), a signed-in user (with the request's IP), or the service itself. */
export type Actor =
  { kind: Extract<AuditActor, 'operator' | 'service'> } | { kind: 'user'; userId: string; ip: string | null };

export async function accountScope(db: Db, accountId: string) {
  const account = isUuid(accountId)
    ? await db.account.findUnique({ where: { id: accountId }, select: { id: true, agencyId: true } })
    : null;
  if (!account) throw new AdminError(`No account ${accountId}`);
  return { accountId: account.id, agencyId: account.agencyId ?? account.id };
}

/** Writes one audit entry for `accountId` (its agency is looked up). */
export async function audit(
  db: Db,
  accountId: string,
  actor: Actor,
  action: AuditAction,
  at: Date,
  detail: Record<string, unknown> = {},
) {
  const scope = await accountScope(db, accountId);
  await insertAuditEntry(db, {
    ...scope,
    actorKind: actor.kind,
    actorUserId: actor.kind === 'user' ? actor.userId : null,
    ip: actor.kind === 'user' ? actor.ip : null,
    action,
    detail,
    at,
  });
}
