// Roles per account (PRODUCT.md, "People and roles"): what each user may do, from the least to the most. A role
// includes every role below it: owner (everything, users and roles included), admin (keys, webhooks, API access,
// carriers), member (agents, calls, cancel, do-not-call), viewer (reads only). An agency's owners and admins manage its
// clients as their owners; an agency's member or viewer is a member or viewer in its clients too.
import { ROLES } from '../../schemas/user-role.js';

export { ROLES };
export type Role = (typeof ROLES)[number];

/** Who may use a dashboard route: anyone (a public page), or a signed-in user with at least this role. */
export type RouteRole = Role | 'public';

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` includes `least`. */
export function hasRole(role: Role, least: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/**
 * The role a user of `userAccountId` has in `accountId` (an account of their scope: their own, or a client of their
 * agency): their own role, except that an agency's admins are owners in its clients.
 */
export function roleIn(user: { accountId: string; role: Role }, accountId: string): Role {
  return user.accountId !== accountId && user.role === 'admin' ? 'owner' : user.role;
}

/** The 403 page's sentence: the least role a refused action needs. */
export function roleNeeded(least: Role): string {
  return `This needs the ${least} role. Ask an owner of your account to give it to you.`;
}

/** Refusals of a role change: the last active owner of an account stays one. */
export const LAST_OWNER =
  'This is the last owner of the account: make another user an owner first (an account always keeps one).';
