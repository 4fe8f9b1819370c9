// Re-enter the password: what requireRecentSignIn sends to before a sensitive action (generating a key or a webhook
// secret) when the last password entry is older than 10 minutes. Throttled like sign-in. A form sent meanwhile waits
// in the session (src/domain/pending-form.ts): after the re-check its page shows it filled in (takePendingForm).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { checkPassword } from '../../admin/users.js';
import { dashboardTarget } from '../../domain/dashboard-target.js';
import { restoredFields } from '../../domain/pending-form.js';
import { ConfirmPasswordForm, ConfirmPasswordQuery } from '../../../schemas/dashboard/forms.js';
import { FormProblem } from '../../views/form-problem.js';

/**
 * The fields of the form sent to `where.action` that waited for the re-check, for the page at `where.path` to show
 * filled in: once (removed from the session here), and only on that page. Null when none waits for it.
 */
export function takePendingForm(
  request: FastifyRequest,
  where: { path: string; action: string },
): Record<string, string> | null {
  const pending = request.session.pendingForm;
  if (!pending) return null;
  const fields = restoredFields(pending, where, request.server.now());
  if (fields || !restoredFields(pending, { path: pending.path, action: pending.action }, request.server.now()))
    delete request.session.pendingForm;
  return fields;
}

/** The page, going back to `next` afterwards; a form sent meanwhile that waits for it is shown filled in there. */
function confirmPage(request: FastifyRequest, nextAsked: string | undefined, problem: string | null) {
  const next = dashboardTarget(nextAsked) ?? '/dashboard';
  const keptForm = request.session.pendingForm?.path === next;
  return { title: 'Confirm your password', next, keptForm, problem };
}

const confirmPassword: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/confirm-password',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: ConfirmPasswordQuery }, attachValidation: true },
    async (request, reply) => {
      return reply.page('confirm-password', confirmPage(request, request.query?.next, null));
    },
  );

  fastify.post(
    '/confirm-password',
    {
      schema: { hide: true, body: ConfirmPasswordForm },
      attachValidation: true,
      config: {
        role: 'viewer',
        formFailure: (request, reply, { status, message }) =>
          reply
            .code(status)
            .page('confirm-password', confirmPage(request, (request.body as { next?: string })?.next, message)),
      },
    },
    async (request, reply) => {
      const viewer = request.user;
      const verdict = await fastify.signInAttempt(request.ip, viewer.email);
      if (!verdict.allowed)
        throw new FormProblem(
          `Too many attempts. Try again in ${Math.ceil(verdict.retryAfterSeconds / 60)} minutes.`,
          429,
        );
      if (!(await request.admin.run(checkPassword, viewer.id, request.body.password)))
        throw new FormProblem('That is not your password.', 401);
      request.session.authenticatedAt = request.admin.now().getTime();
      return reply.redirect(dashboardTarget(request.body.next) ?? '/dashboard', 303);
    },
  );
};

export default confirmPassword;
