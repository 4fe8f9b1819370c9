// Users: the people of the accounts the viewer manages (an agency user: the agency's and every client's; a client
// user: their client's), with their roles. The agency's owners (and its admins, in its clients) invite and make new
// sign-in links (a one-time link, shown once in the answer to the POST, also e-mailed when SMTP_URL is set; both need
// a recent password entry), disable, enable and change roles; for client users those actions do not exist (404).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LinkLimitError, newSignInLink, sendAuditedMail } from '../../admin/user-links.js';
import { disableUser, enableUser, inviteUser, setPasswordUrl } from '../../admin/users.js';
import { isRole } from '../../domain/roles.js';
import { normalizeEmail } from '../../domain/user-email.js';
import type { MailMessage } from '../../mail/mailer.js';
import { invitationMail, signInLinkMail, type MailKind } from '../../mail/messages.js';
import {
  DisableUserForm,
  EnableUserForm,
  InviteUserForm,
  UserLinkForm,
  UserParams,
} from '../../../schemas/dashboard/people.js';
import { notAnEmailAddress } from '../../../schemas/user-email.js';
import { takePendingForm } from './confirm-password.js';
import { refusals, type FormFailure, type Refusal } from '../../views/form-problem.js';
import { formatTime } from '../../domain/utc-time.js';
import type { PageData } from '../../views/page-models.js';
import { invitableAccountsOf, usersPage } from '../../views/pages/users.js';
import { ROLES } from '../../views/pages/users-table.js';
import { isUuid } from '../../../schemas/uuid.js';

/** The one-time link on the origin the inviting user is on (PUBLIC_BASE_URL when set, as callctl prints it). */
function invitationLink(fastify: FastifyInstance, request: FastifyRequest, token: string): string {
  return setPasswordUrl(
    { PUBLIC_BASE_URL: fastify.config.PUBLIC_BASE_URL ?? `https://${request.host}`, PORT: fastify.config.PORT },
    token,
  );
}

/** A people form's page to go back to: the client's page when it was sent from there, else the Users page. */
export function pageOf(account: { id: string; kind: string } | null, from: string | undefined): string {
  return account?.kind === 'client' && from === 'client' ? `/dashboard/clients/${account.id}` : '/dashboard/users';
}

/**
 * E-mails a one-time link when SMTP_URL is set (after the answer; a failure is logged, never shown), audited on the
 * link's account as sent by the viewer.
 */
function mailLaterOf(fastify: FastifyInstance) {
  return (
    request: FastifyRequest,
    input: { accountId: string; kind: MailKind; message: MailMessage },
  ): string | null => {
    const mailer = fastify.mailer;
    const actor = request.admin.actor;
    mailer?.later(() =>
      request.admin.run(sendAuditedMail, mailer, { ...input, actor, now: () => request.admin.now() }),
    );
    return mailer ? input.message.to : null;
  };
}

/** A refusal's status: 429 for a limit reached (src/domain/people-limits.ts), else 400. */
const statusOf = (error: Error) => (error instanceof LinkLimitError ? 429 : 400);

const users: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/users', { config: { role: 'viewer' }, schema: { hide: true } }, async (request, reply) => {
    const page = await usersPage(request, fastify.mailer !== null, null);
    // An invitation sent when the password had to be typed again: its form comes back as it was filled in.
    const kept = takePendingForm(request, { path: '/dashboard/users', action: '/dashboard/users/invite' });
    if (kept)
      page.invite = {
        ...page.invite,
        email: kept.email ?? '',
        account: kept.account ?? page.invite.account,
        role: isRole(kept.role) ? kept.role : page.invite.role,
      };
    return reply.page('users', page);
  });
};

/** What agency users do to people (invite, links, disable, enable): the agency-only family's routes. */
export const userActions: FastifyPluginAsyncTypebox = async (fastify) => {
  /** A refused action on a user: the Users page again, the refusal above it (429 for a limit reached). */
  const usersAgain = async (request: FastifyRequest, reply: FastifyReply, { message, error }: FormFailure) =>
    reply.code(statusOf(error)).page('users', await usersPage(request, fastify.mailer !== null, message));

  // `/users/:id/...`: a user of an account the viewer manages, else 404.
  fastify.resolveManaged('user', 'id');

  /**
   * After re-entering the password, back to the page with the form (a POST cannot be repeated by a redirect). Only a
   * well-formed id makes a client path; the client page itself checks that the viewer manages it.
   */
  const recentSignIn = fastify.dashboardGuards.requireRecentSignIn((request) => {
    const body = request.body as { from?: unknown; account?: unknown } | undefined;
    const account = typeof body?.account === 'string' && isUuid(body.account) ? body.account : null;
    return body?.from === 'client' && account ? `/dashboard/clients/${account}` : '/dashboard/users';
  });
  const mailLater = mailLaterOf(fastify);

  /** The account an invitation is for: one of the viewer's, else 404 (an id the schema refused too). */
  const invitedTo = async (request: FastifyRequest, body: InviteUserForm, refused: Refusal[]) => {
    if (refused.some((r) => r.field === 'account')) throw fastify.httpErrors.notFound();
    const account = await request.scoped.findAccountInScope(body.account);
    if (!account) throw fastify.httpErrors.notFound();
    return account;
  };

  /** The invitation form again as it was filled in (`body`, null for a form the page never sends), its problem under it. */
  const inviteAgain = async (
    request: FastifyRequest,
    body: InviteUserForm | null,
    account: { id: string; kind: string } | null,
    problem: string,
  ): Promise<PageData<'users-invite'>> => ({
    title: 'Invite a user',
    invited: null,
    back: pageOf(account, body?.from),
    invite: {
      accounts: await invitableAccountsOf(request),
      account: account?.id ?? request.user.accountId,
      email: body?.email ?? '',
      role: isRole(body?.role) ? body.role : 'member',
      roles: ROLES,
      problem,
      mailEnabled: fastify.mailer !== null,
    },
    from: body?.from ?? 'users',
  });

  fastify.post(
    '/users/invite',
    {
      schema: { hide: true, body: InviteUserForm },
      attachValidation: true,
      preHandler: recentSignIn,
      config: {
        // An owner of the account the form names (an agency's admin is one in its clients).
        role: 'owner',
        roleAccount: (request) => (request.body as { account?: unknown } | undefined)?.account,
        // An address the schema refused is said in words; a limit reached is a 429.
        formFailure: async (request, reply, { message, error, invalid }) => {
          const refused = invalid ? refusals(request, InviteUserForm, request.body) : [];
          if (!refused) return reply.code(400).page('users-invite', await inviteAgain(request, null, null, message));
          const body = request.body as InviteUserForm;
          const account = await invitedTo(request, body, refused);
          const problem = refused.some((r) => r.field === 'email') ? notAnEmailAddress(body.email) : message;
          return reply.code(statusOf(error)).page('users-invite', await inviteAgain(request, body, account, problem));
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const account = await invitedTo(request, body, []);
      const invited = await request.admin.run(inviteUser, {
        accountId: account.id,
        email: body.email,
        role: body.role ?? 'member',
        invitedBy: { userId: request.user.id, ip: request.ip, scope: request.scope },
        now: request.admin.now(),
      });
      // Shown in this answer only (never cached, never kept in the session): reloading would send the form again,
      // which is refused as a taken email.
      const email = normalizeEmail(body.email);
      const emailedTo = mailLater(request, {
        accountId: account.id,
        kind: 'invitation',
        message: invitationMail({
          to: email,
          accountName: account.name,
          link: setPasswordUrl(fastify.config, invited.token),
          // The e-mail's reader has no zone of theirs here: UTC, as callctl writes it.
          expires: formatTime(invited.expiresAt),
        }),
      });
      return reply.page('users-invite', {
        title: 'Invitation link',
        invited: {
          email,
          accountName: account.name,
          link: invitationLink(fastify, request, invited.token),
          expires: request.times.time(invited.expiresAt),
          emailedTo,
        },
        back: pageOf(account, body.from),
      });
    },
  );

  fastify.post(
    '/users/:id/disable',
    {
      schema: { hide: true, params: UserParams, body: DisableUserForm },
      attachValidation: true,
      config: { role: 'owner', formFailure: usersAgain },
    },
    async (request, reply) => {
      const { user, account } = request.managed('user');
      const result = await request.admin.run(disableUser, user.id, request.admin.actor, request.admin.now());
      const back = pageOf(account, request.body.from);
      const sessions = result.sessions_ended === 1 ? '1 session' : `${result.sessions_ended} sessions`;
      const text = result.already_disabled
        ? `${user.email} was already disabled.`
        : `${user.email} is disabled; ${sessions} ended.`;
      return reply.seeOther(back, { kind: 'ok', text });
    },
  );

  fastify.post(
    '/users/:id/link',
    {
      schema: { hide: true, params: UserParams, body: UserLinkForm },
      attachValidation: true,
      config: { role: 'owner', formFailure: usersAgain },
      preHandler: recentSignIn,
    },
    async (request, reply) => {
      const { user, account } = request.managed('user');
      const made = await request.admin.run(newSignInLink, {
        userId: user.id,
        actor: request.admin.actor,
        now: request.admin.now(),
      });
      const emailedTo = mailLater(request, {
        accountId: account.id,
        kind: 'sign_in_link',
        message: signInLinkMail({
          to: made.email,
          accountName: account.name,
          link: setPasswordUrl(fastify.config, made.token),
          expires: formatTime(made.expiresAt),
        }),
      });
      // Like an invitation: in this answer only, never cached; a reload sends the form again and voids this link.
      return reply.page('users-link', {
        title: 'New sign-in link',
        made: {
          email: made.email,
          accountName: account.name,
          link: invitationLink(fastify, request, made.token),
          expires: request.times.time(made.expiresAt),
          emailedTo,
        },
        back: pageOf(account, request.body.from),
      });
    },
  );

  fastify.post(
    '/users/:id/enable',
    {
      schema: { hide: true, params: UserParams, body: EnableUserForm },
      attachValidation: true,
      config: { role: 'owner', formFailure: usersAgain },
    },
    async (request, reply) => {
      const { user, account } = request.managed('user');
      const result = await request.admin.run(enableUser, user.id, request.admin.actor, request.admin.now());
      const next = user.passwordHash
        ? 'They can sign in with their password.'
        : 'They have no password yet: make them a new sign-in link.';
      const text = result.already_enabled
        ? `${user.email} was not disabled.`
        : `${user.email} is enabled again. ${next}`;
      return reply.seeOther(pageOf(account, request.body.from), { kind: 'ok', text });
    },
  );
};

export default users;
