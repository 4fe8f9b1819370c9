// Set a password from a one-time link (/dashboard/set-password/<token>): made by `callctl user create` or an
// invitation. The link works once and for 24 h; using it ends any session the user had; then they sign in.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LINK_UNUSABLE, setPasswordWithLink, usableLink } from '../../admin/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/password-policy.js';
import { SetPasswordForm, SetPasswordParams } from '../../../schemas/dashboard/forms.js';
import { FormProblem } from '../../views/form-problem.js';

const POLICY = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH };

function linkUnusable(reply: FastifyReply) {
  return reply.code(410).page('link-unusable', { title: 'Link not valid', message: LINK_UNUSABLE });
}

/** The link's form again, with its problem; or "link not valid" once the link is (its token is checked first). */
async function formAgain(request: FastifyRequest, reply: FastifyReply, problem: string) {
  const token = (request.params as { token?: string } | undefined)?.token ?? '';
  const link = await request.admin.run(usableLink, token, request.admin.now());
  if (!link) return linkUnusable(reply);
  return reply.code(400).page('set-password', {
    title: 'Choose your password',
    email: link.email,
    action: request.url,
    policy: POLICY,
    problem,
  });
}

const setPassword: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/set-password/:token',
    { config: { role: 'public' }, schema: { hide: true, params: SetPasswordParams }, attachValidation: true },
    async (request, reply) => {
      const link = request.validationError
        ? null
        : await request.admin.run(usableLink, request.params.token, request.admin.now());
      if (!link) return linkUnusable(reply);
      return reply.page('set-password', {
        title: 'Choose your password',
        email: link.email,
        action: request.url,
        policy: POLICY,
        problem: null,
      });
    },
  );

  fastify.post(
    '/set-password/:token',
    {
      schema: { hide: true, params: SetPasswordParams, body: SetPasswordForm },
      attachValidation: true,
      config: { role: 'public', formFailure: (request, reply, { message }) => formAgain(request, reply, message) },
    },
    async (request, reply) => {
      const now = request.admin.now();
      const link = await request.admin.run(usableLink, request.params.token, now);
      if (!link) return linkUnusable(reply);
      if (request.body.password !== request.body.confirm) throw new FormProblem('The two passwords are not the same.');
      const result = await request.admin.run(setPasswordWithLink, {
        token: request.params.token,
        password: request.body.password,
        ip: request.ip,
        now,
      });
      if (!result.ok) {
        if (result.problem === LINK_UNUSABLE) return linkUnusable(reply);
        throw new FormProblem(result.problem);
      }
      return reply.seeOther('/dashboard/sign-in', { kind: 'ok', text: 'Your password is set. Sign in with it.' });
    },
  );
};

export default setPassword;
