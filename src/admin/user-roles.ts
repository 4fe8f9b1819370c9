// Roles of dashboard people (src/domain/roles.ts): giving a user a role, and the rule that an account keeps an active
// owner, which disabling a user (./users.ts) applies too.
import { LAST_OWNER, type Role } from '../domain/roles.js';
import type { Repositories, Storage } from '../storage/index.js';
import { audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';
import { findUser } from './reach.js';

/**
 * Refuses (AdminError) a change that would leave `user`'s account without an active owner: `user` is its last one.
 * The owners' rows stay locked until the caller's transaction ends, so two such changes at once cannot both pass.
 */
export async function keepLastOwner(tx: Repositories, user: { id: string; accountId: string }): Promise<void> {
  const owners = await tx.users.lockActiveOwners(user.accountId);
  if (owners.length === 1 && owners[0] === user.id) throw new AdminError(LAST_OWNER);
}

/**
 * Gives a user (one the actor reaches) the role `role` in their account, audited as user_role_changed. The last
 * active owner of an account stays one (AdminError). Who may do this is the caller's rule (src/admin/action-roles.ts):
 * an owner of the account, or an owner or admin of its agency.
 */
export async function setUserRole(storage: Storage, userId: string, role: Role, actor: Actor, now: Date) {
  const user = await findUser(storage, userId, actor);
  return storage.transaction(async (tx) => {
    if (role !== 'owner') await keepLastOwner(tx, user);
    // Read again under the lock: the role another change gave meanwhile is the one replaced.
    const before = (await tx.users.findUserById(user.id))!.role;
    const changed = await tx.users.setRole(user.id, role);
    if (changed)
      await audit(tx, user.accountId, actor, 'user_role_changed', now, {
        user_id: user.id,
        email: user.email,
        from: before,
        to: role,
      });
    return { id: user.id, email: user.email, role, previous_role: before, changed };
  });
}
