// Account: the signed-in user's own settings. Change the password (every other session ends) and sign out
// everywhere (every session ends, this one too).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { changePassword, endAllSessions } from '../../admin/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/password-policy.js';
import { ChangePasswordForm, CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import { FormProblem } from '../../views/form-problem.js';
import { timeOrNull } from '../../views/format/time.js';
import type { PageData } from '../../views/page-models.js';

const POLICY = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH };

async function accountPage(request: FastifyRequest, problem: string | null): Promise<PageData<'account'>> {
  const user = await request.scoped.viewerRow();
  return { title: 'Account', lastSignIn: timeOrNull(user?.lastSignInAt), policy: POLICY, problem };
}

const account: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/account', { schema: { hide: true } }, async (request, reply) =>
    reply.page('account', await accountPage(request, null)),
  );

  fastify.post(
    '/account/password',
    {
      schema: { hide: true, body: ChangePasswordForm },
      attachValidation: true,
      config: {
        formFailure: async (request, reply, { status, message }) =>
          reply.code(status).page('account', await accountPage(request, message)),
      },
    },
    async (request, reply) => {
      const viewer = request.user;
      if (request.body.password !== request.body.confirm)
        throw new FormProblem('The two new passwords are not the same.');
      const verdict = await fastify.signInAttempt(request.ip, viewer.email);
      if (!verdict.allowed)
        throw new FormProblem(
          `Too many attempts. Try again in ${Math.ceil(verdict.retryAfterSeconds / 60)} minutes.`,
          429,
        );
      const now = request.admin.now();
      const result = await request.admin.run(changePassword, {
        userId: viewer.id,
        current: request.body.current,
        next: request.body.password,
        keep: request.sessionDigest(),
        ip: request.ip,
        now,
      });
      if (!result.ok) throw new FormProblem(result.problem);
      // This session goes on under a new id, with the password just typed counting as a recent sign-in.
      await request.session.regenerate(['userId']);
      request.session.authenticatedAt = now.getTime();
      const others = result.sessionsEnded === 1 ? '1 other session was' : `${result.sessionsEnded} other sessions were`;
      return reply.seeOther('/dashboard/account', {
        kind: 'ok',
        text: `Your password is changed; ${others} signed out.`,
      });
    },
  );

  fastify.post(
    '/account/sign-out-everywhere',
    { schema: { hide: true, body: CsrfOnlyForm } },
    async (request, reply) => {
      await request.admin.run(endAllSessions, { userId: request.user.id, ip: request.ip, now: request.admin.now() });
      // The store row is gone already; the cookie goes too, and this request saves nothing.
      (request as { session: unknown }).session = null;
      reply.clearSessionCookie();
      return reply.redirect('/dashboard/sign-in', 303);
    },
  );
};

export default account;
