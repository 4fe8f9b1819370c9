// Users: the people of the accounts the viewer manages (an agency user: the agency's and every client's; a client
// user: their client's). Agency users invite (a one-time link, shown once in the answer to the POST) and disable;
// for client users those actions do not exist (404).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.js';
import { disableUser, inviteUser, setPasswordUrl } from '../../admin/users.js';
import { isUuid } from '../../domain/ids.js';
import { normalizeEmail } from '../../domain/user-email.js';
import { managedAccount, requireAgencyUser, requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { listClientNames } from '../../storage/accounts.js';
import { findUserById, listUsers, type ActiveUser } from '../../storage/users.js';
import { DisableUserForm, InviteUserForm, UserParams } from '../../../schemas/dashboard/people.js';
import { formatTime } from './call-view.js';
import { clientIp, formProblem } from './form-problem.js';

/** A time as the pages show it: minutes, UTC. */
export function shownTime(at: Date | null): string {
  return at ? formatTime(at) : '-';
}

export interface PersonRow {
  id: string;
  email: string;
  accountName: string;
  status: string;
  created: string;
  lastSignIn: string;
  /** Whether the viewer gets a Disable button for this user (an agency user; not themselves; not disabled yet). */
  canDisable: boolean;
  isViewer: boolean;
}

/** The users of `accounts` as the users table shows them to `viewer`, oldest first. */
export async function peopleOf(fastify: FastifyInstance, viewer: ActiveUser, accounts: { id: string; name: string }[]): Promise<PersonRow[]> {
  const names = new Map(accounts.map((a) => [a.id, a.name]));
  const users = await listUsers(fastify.prisma, accounts.map((a) => a.id));
  return users.map((user) => ({
    id: user.id,
    email: user.email,
    accountName: names.get(user.accountId) ?? '',
    status: user.disabledAt ? `disabled ${shownTime(user.disabledAt)}` : user.passwordSet ? 'active' : 'invited (no password yet)',
    created: shownTime(user.createdAt),
    lastSignIn: shownTime(user.lastSignInAt),
    canDisable: viewer.accountKind === 'agency' && !user.disabledAt && user.id !== viewer.id,
    isViewer: user.id === viewer.id,
  }));
}

/** The accounts whose users the viewer sees, their own first: an agency user's agency and clients, or their client. */
async function accountsOf(fastify: FastifyInstance, viewer: ActiveUser) {
  const own = { id: viewer.accountId, name: viewer.accountName };
  return viewer.accountKind === 'agency' ? [own, ...(await listClientNames(fastify.prisma, viewer.accountId))] : [own];
}

/** The one-time link on the origin the inviting user is on (PUBLIC_BASE_URL when set, as callctl prints it). */
function invitationLink(fastify: FastifyInstance, request: FastifyRequest, token: string): string {
  return setPasswordUrl({ PUBLIC_BASE_URL: fastify.config.PUBLIC_BASE_URL ?? `https://${request.host}`, PORT: fastify.config.PORT }, token);
}

export default async function users(fastify: FastifyInstance) {
  const usersPage = async (request: FastifyRequest, problem: string | null) => {
    const viewer = viewerOf(request);
    const accounts = await accountsOf(fastify, viewer);
    return {
      title: 'Users',
      people: await peopleOf(fastify, viewer, accounts),
      showAccount: viewer.accountKind === 'agency',
      canManage: viewer.accountKind === 'agency',
      from: 'users',
      invite: { accounts, account: viewer.accountId, email: '', problem: null },
      problem,
    };
  };

  fastify.get('/users', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => reply.page('users', await usersPage(request, null)));

  fastify.post<{ Body: InviteUserForm }>(
    '/users/invite',
    { schema: { hide: true, body: InviteUserForm }, attachValidation: true, preHandler: requireAgencyUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const accounts = await accountsOf(fastify, viewer);
      const body = request.validationError ? null : request.body;
      const backTo = (account: { id: string; kind: string } | null) =>
        account?.kind === 'client' && body?.from === 'client' ? `/dashboard/clients/${account.id}` : '/dashboard/users';
      const render = (status: number, problem: string, account: { id: string; kind: string } | null) =>
        reply.code(status).page('users-invite', {
          title: 'Invite a user',
          invited: null,
          back: backTo(account),
          invite: { accounts, account: account?.id ?? viewer.accountId, email: body?.email ?? '', problem },
          from: body?.from ?? 'users',
        });
      if (!body) return render(400, formProblem(request)!, null);
      const account = await managedAccount(request, reply, body.account);
      try {
        const invited = await inviteUser(fastify.prisma, {
          accountId: account.id,
          email: body.email,
          invitedBy: { userId: viewer.id, ip: clientIp(request) },
          now: fastify.now(),
        });
        // Shown in this answer only (never cached, never kept in the session): reloading would send the form again,
        // which is refused as a taken email.
        return reply.page('users-invite', {
          title: 'Invitation link',
          invited: { email: normalizeEmail(body.email), accountName: account.name, link: invitationLink(fastify, request, invited.token), expires: shownTime(invited.expiresAt) },
          back: backTo(account),
        });
      } catch (error) {
        if (error instanceof AdminError) return render(400, error.message, account);
        throw error;
      }
    },
  );

  fastify.post<{ Params: UserParams; Body: DisableUserForm }>(
    '/users/:id/disable',
    { schema: { hide: true, params: UserParams, body: DisableUserForm }, attachValidation: true, preHandler: requireAgencyUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const user = isUuid(request.params.id) ? await findUserById(fastify.prisma, request.params.id) : null;
      if (!user) throw fastify.httpErrors.notFound();
      const account = await managedAccount(request, reply, user.accountId);
      const problem = formProblem(request);
      if (problem) return reply.code(400).page('users', await usersPage(request, problem));
      try {
        const result = await disableUser(fastify.prisma, user.id, { kind: 'user', userId: viewer.id, ip: clientIp(request) }, fastify.now());
        const back = account.kind === 'client' && request.body.from === 'client' ? `/dashboard/clients/${account.id}` : '/dashboard/users';
        const sessions = result.sessions_ended === 1 ? '1 session' : `${result.sessions_ended} sessions`;
        const text = result.already_disabled ? `${user.email} was already disabled.` : `${user.email} is disabled; ${sessions} ended.`;
        return reply.seeOther(back, { kind: 'ok', text });
      } catch (error) {
        if (error instanceof AdminError) return reply.code(400).page('users', await usersPage(request, error.message));
        throw error;
      }
    },
  );
}
