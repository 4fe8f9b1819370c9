// The users table's model (users-table.eta), shown on the Users page and a client's page, and its rows.
import type { FastifyRequest } from 'fastify';
import { hasRole, roleIn, ROLES, type Role } from '../../domain/roles.js';
import { isAgencyScope, scopeOf } from '../../domain/tenancy.js';
import type { ActiveUser } from '../../storage/index.js';
import type { PeopleFrom } from './users-invite-form.js';

export interface PersonRow {
  id: string;
  email: string;
  accountName: string;
  status: string;
  created: string;
  lastSignIn: string;
  role: Role;
  /** A role select and "Change role": the viewer manages the people of this user's account. */
  canChangeRole: boolean;
  /** Whether the viewer gets a Disable button for this user (an agency user; not themselves; not disabled yet). */
  canDisable: boolean;
  /** "New sign-in link": the same users as Disable (a disabled user is enabled first). */
  canLink: boolean;
  /** "Enable": an agency user, for a disabled user. */
  canEnable: boolean;
  isViewer: boolean;
}

/** The users table (src/views/users-table.eta). */
export interface UsersTableModel {
  people: PersonRow[];
  showAccount: boolean;
  canManage: boolean;
  from: PeopleFrom;
  /** The roles a select offers, from the least. */
  roles: readonly Role[];
}

/**
 * Whether `viewer` manages the people of `accountId` (invites, links, disables, roles): an agency user who is an owner
 * there (their agency's owners; its owners and admins in its clients). A client's people are its agency's to manage.
 */
export function managesPeopleOf(viewer: ActiveUser, accountId: string): boolean {
  return isAgencyScope(scopeOf(viewer)) && hasRole(roleIn(viewer, accountId), 'owner');
}

export { ROLES };

/** The users of `accounts` as the users table shows them to `viewer`, oldest first. */
export async function peopleOf(
  request: FastifyRequest,
  accounts: { id: string; name: string }[],
): Promise<PersonRow[]> {
  const viewer = request.user;
  const names = new Map(accounts.map((a) => [a.id, a.name]));
  const users = await request.scoped.usersOf(accounts);
  return users.map((user) => ({
    id: user.id,
    email: user.email,
    accountName: names.get(user.accountId) ?? '',
    status: user.disabledAt
      ? `disabled ${request.times.time(user.disabledAt)}`
      : user.passwordSet
        ? 'active'
        : 'invited (no password yet)',
    created: request.times.time(user.createdAt),
    lastSignIn: request.times.orDash(user.lastSignInAt),
    role: user.role,
    canChangeRole: managesPeopleOf(viewer, user.accountId),
    canDisable: managesPeopleOf(viewer, user.accountId) && !user.disabledAt && user.id !== viewer.id,
    canLink: managesPeopleOf(viewer, user.accountId) && !user.disabledAt && user.id !== viewer.id,
    canEnable: managesPeopleOf(viewer, user.accountId) && user.disabledAt !== null,
    isViewer: user.id === viewer.id,
  }));
}
