// Account: the signed-in user's own settings. Change the password (every other session ends) and sign out
// everywhere (every session ends, this one too).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { changePassword, endAllSessions } from '../../admin/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/password-policy.js';
import { ChangePasswordForm, CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import { clientIp, formProblem } from '../../views/form-problem.js';
import { timeOrNull } from '../../views/format/time.js';
import type { PageData } from '../../views/page-models.js';

const POLICY = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH };

export default async function account(fastify: FastifyInstance) {
  const show = async (request: FastifyRequest, problem: string | null): Promise<PageData<'account'>> => {
    const user = await fastify.storage.users.findUserById(request.user.id);
    return {
      title: 'Account',
      lastSignIn: timeOrNull(user?.lastSignInAt),
      policy: POLICY,
      problem,
    };
  };

  fastify.get('/account', { schema: { hide: true } }, async (request, reply) =>
    reply.page('account', await show(request, null)),
  );

  fastify.post<{ Body: ChangePasswordForm }>(
    '/account/password',
    { schema: { hide: true, body: ChangePasswordForm }, attachValidation: true },
    async (request, reply) => {
      const viewer = request.user;
      const render = async (problem: string) => reply.code(400).page('account', await show(request, problem));
      const problem = formProblem(request);
      if (problem) return render(problem);
      if (request.body.password !== request.body.confirm) return render('The two new passwords are not the same.');
      const verdict = await fastify.signInAttempt(clientIp(request), viewer.email);
      if (!verdict.allowed)
        return reply
          .code(429)
          .page(
            'account',
            await show(
              request,
              `Too many attempts. Try again in ${Math.ceil(verdict.retryAfterSeconds / 60)} minutes.`,
            ),
          );
      const now = fastify.now();
      const result = await changePassword(fastify.storage, {
        userId: viewer.id,
        current: request.body.current,
        next: request.body.password,
        keep: request.sessionDigest(),
        ip: clientIp(request),
        now,
      });
      if (!result.ok) return render(result.problem);
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

  fastify.post<{ Body: CsrfOnlyForm }>(
    '/account/sign-out-everywhere',
    { schema: { hide: true, body: CsrfOnlyForm } },
    async (request, reply) => {
      await endAllSessions(fastify.storage, { userId: request.user.id, ip: clientIp(request), now: fastify.now() });
      // The store row is gone already; the cookie goes too, and this request saves nothing.
      (request as { session: unknown }).session = null;
      reply.clearSessionCookie();
      return reply.redirect('/dashboard/sign-in', 303);
    },
  );
}
