// The users page's model: what src/views/pages/users.eta reads (with the partials it includes), and its making.
import type { FastifyRequest } from 'fastify';
import { isAgencyScope } from '../../domain/tenancy.js';
import type { PageData } from '../page-models.js';
import type { KeysOf, Problem } from './model-parts.js';
import type { InviteFormModel } from './users-invite-form.js';
import { managesPeopleOf, peopleOf, ROLES, type UsersTableModel } from './users-table.js';

export type UsersModel = UsersTableModel & InviteFormModel & { problem: Problem };

/** The fields users.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const USERS_FIELDS = [
  'people',
  'showAccount',
  'canManage',
  'from',
  'roles',
  'invite',
  'problem',
] as const satisfies readonly KeysOf<UsersModel>[];

/** The accounts whose users the viewer sees, their own first: an agency user's agency and clients, or their client. */
export async function accountsOf(request: FastifyRequest) {
  return (await request.scoped.listAccountsInScope()).map(({ id, name }) => ({ id, name }));
}

/** The accounts the viewer may invite people to: those whose people they manage (users-table.ts). */
export async function invitableAccountsOf(request: FastifyRequest) {
  return (await accountsOf(request)).filter((account) => managesPeopleOf(request.user, account.id));
}

/** The Users page: the people the viewer sees, and the invitation form when they manage some account's people. */
export async function usersPage(
  request: FastifyRequest,
  mailEnabled: boolean,
  problem: string | null,
): Promise<PageData<'users'>> {
  const accounts = await accountsOf(request);
  const invitable = await invitableAccountsOf(request);
  return {
    title: 'Users',
    people: await peopleOf(request, accounts),
    showAccount: isAgencyScope(request.scope),
    canManage: invitable.length > 0,
    from: 'users',
    roles: ROLES,
    invite: {
      accounts: invitable,
      account: invitable[0]?.id ?? request.user.accountId,
      email: '',
      role: 'member',
      roles: ROLES,
      problem: null,
      mailEnabled,
    },
    problem,
  };
}
