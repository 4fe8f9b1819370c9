// Re-enter the password: what requireRecentSignIn sends to before a sensitive action (generating a key or a webhook
// secret) when the last password entry is older than 10 minutes. Throttled like sign-in. A form sent meanwhile waits
// in the session (src/domain/pending-form.ts): after the re-check its page shows it filled in (takePendingForm).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkPassword } from '../../admin/users.js';
import { dashboardTarget } from '../../domain/dashboard-target.js';
import { restoredFields } from '../../domain/pending-form.js';
import { ConfirmPasswordForm, ConfirmPasswordQuery } from '../../../schemas/dashboard/forms.js';
import { clientIp, formProblem } from '../../views/form-problem.js';

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

export default async function confirmPassword(fastify: FastifyInstance) {
  fastify.get<{ Querystring: ConfirmPasswordQuery }>(
    '/confirm-password',
    { schema: { hide: true, querystring: ConfirmPasswordQuery }, attachValidation: true },
    async (request, reply) => {
      const next = dashboardTarget(request.query?.next) ?? '/dashboard';
      const keptForm = request.session.pendingForm?.path === next;
      return reply.page('confirm-password', { title: 'Confirm your password', next, keptForm, problem: null });
    },
  );

  fastify.post<{ Body: ConfirmPasswordForm }>(
    '/confirm-password',
    { schema: { hide: true, body: ConfirmPasswordForm }, attachValidation: true },
    async (request, reply) => {
      const viewer = request.user;
      const next = dashboardTarget(request.body?.next) ?? '/dashboard';
      const keptForm = request.session.pendingForm?.path === next;
      const render = (status: number, problem: string) =>
        reply.code(status).page('confirm-password', { title: 'Confirm your password', next, keptForm, problem });
      const problem = formProblem(request);
      if (problem) return render(400, problem);
      const verdict = await fastify.signInAttempt(clientIp(request), viewer.email);
      if (!verdict.allowed)
        return render(429, `Too many attempts. Try again in ${Math.ceil(verdict.retryAfterSeconds / 60)} minutes.`);
      if (!(await checkPassword(fastify.storage, viewer.id, request.body.password)))
        return render(401, 'That is not your password.');
      request.session.authenticatedAt = fastify.now().getTime();
      return reply.redirect(next, 303);
    },
  );
}
