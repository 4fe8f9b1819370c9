// Set a password from a one-time link (/dashboard/set-password/<token>): made by `callctl user create` or an
// invitation. The link works once and for 24 h; using it ends any session the user had; then they sign in.
import type { FastifyInstance } from 'fastify';
import { LINK_UNUSABLE, setPasswordWithLink, usableLink } from '../../admin/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/password-policy.js';
import { SetPasswordForm, SetPasswordParams } from '../../../schemas/dashboard/forms.js';
import { clientIp, formProblem } from '../../views/form-problem.js';

const POLICY = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH };

export default async function setPassword(fastify: FastifyInstance) {
  fastify.get<{ Params: SetPasswordParams }>(
    '/set-password/:token',
    { schema: { hide: true, params: SetPasswordParams }, attachValidation: true },
    async (request, reply) => {
      const link = request.validationError
        ? null
        : await usableLink(fastify.storage, request.params.token, fastify.now());
      if (!link) return reply.code(410).page('link-unusable', { title: 'Link not valid', message: LINK_UNUSABLE });
      return reply.page('set-password', {
        title: 'Choose your password',
        email: link.email,
        action: request.url,
        policy: POLICY,
        problem: null,
      });
    },
  );

  fastify.post<{ Params: SetPasswordParams; Body: SetPasswordForm }>(
    '/set-password/:token',
    { schema: { hide: true, params: SetPasswordParams, body: SetPasswordForm }, attachValidation: true },
    async (request, reply) => {
      const now = fastify.now();
      const link = await usableLink(fastify.storage, request.params?.token ?? '', now);
      if (!link) return reply.code(410).page('link-unusable', { title: 'Link not valid', message: LINK_UNUSABLE });
      const render = (problem: string) =>
        reply.code(400).page('set-password', {
          title: 'Choose your password',
          email: link.email,
          action: request.url,
          policy: POLICY,
          problem,
        });
      const problem = formProblem(request);
      if (problem) return render(problem);
      if (request.body.password !== request.body.confirm) return render('The two passwords are not the same.');
      const result = await setPasswordWithLink(fastify.storage, {
        token: request.params.token,
        password: request.body.password,
        ip: clientIp(request),
        now,
      });
      if (!result.ok)
        return result.problem === LINK_UNUSABLE
          ? reply.code(410).page('link-unusable', { title: 'Link not valid', message: LINK_UNUSABLE })
          : render(result.problem);
      return reply.seeOther('/dashboard/sign-in', { kind: 'ok', text: 'Your password is set. Sign in with it.' });
    },
  );
}
