// Sign in (GET shows the form, POST checks it) and sign out. One message for an unknown email and a wrong password;
// attempts are throttled per IP and per email; a new session id at sign-in (no session fixation).
import type { FastifyInstance } from 'fastify';
import { authenticate, recordSignOut } from '../../admin/users.js';
import { dashboardTarget } from '../../domain/dashboard-target.js';
import { CsrfOnlyForm, SignInForm, SignInQuery } from '../../../schemas/dashboard/forms.js';
import { clientIp, formProblem } from './form-problem.js';

export const SIGN_IN_REFUSED = 'The email or password is not right.';

function tooMany(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

export default async function signIn(fastify: FastifyInstance) {
  fastify.get<{ Querystring: SignInQuery }>(
    '/sign-in',
    { schema: { hide: true, querystring: SignInQuery }, attachValidation: true },
    async (request, reply) => {
      const next = dashboardTarget(request.query?.next) ?? '/dashboard';
      if (request.viewer) return reply.redirect(next, 303);
      return reply.page('sign-in', { title: 'Sign in', email: '', next, problem: null });
    },
  );

  fastify.post<{ Body: SignInForm }>(
    '/sign-in',
    { schema: { hide: true, body: SignInForm }, attachValidation: true },
    async (request, reply) => {
      const next = dashboardTarget(request.body?.next) ?? '/dashboard';
      const problem = formProblem(request);
      if (problem) return reply.code(400).page('sign-in', { title: 'Sign in', email: '', next, problem });
      const { email, password } = request.body;
      const verdict = await fastify.signInAttempt(clientIp(request), email);
      if (!verdict.allowed) {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        return reply
          .code(429)
          .page('sign-in', { title: 'Sign in', email, next, problem: tooMany(verdict.retryAfterSeconds) });
      }
      const now = fastify.now();
      const result = await authenticate(fastify.storage, { email, password, ip: clientIp(request), now });
      if (!result.ok)
        return reply.code(401).page('sign-in', { title: 'Sign in', email, next, problem: SIGN_IN_REFUSED });
      // A new session (new id, the old one destroyed): an id planted before sign-in is worth nothing after it.
      await request.session.regenerate();
      request.session.userId = result.userId;
      request.session.authenticatedAt = now.getTime();
      return reply.redirect(next, 303);
    },
  );

  fastify.post<{ Body: CsrfOnlyForm }>(
    '/sign-out',
    { schema: { hide: true, body: CsrfOnlyForm } },
    async (request, reply) => {
      if (request.viewer)
        await recordSignOut(fastify.storage, { userId: request.viewer.id, ip: clientIp(request), now: fastify.now() });
      await request.session.destroy();
      reply.clearSessionCookie();
      return reply.redirect('/dashboard/sign-in', 303);
    },
  );
}
