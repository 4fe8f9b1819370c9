// Sign in (GET shows the form, POST checks it) and sign out. One message for an unknown email and a wrong password;
// attempts are throttled per IP and per email; a new session id at sign-in (no session fixation). When one email has
// users in several accounts and the password opens more than one, a choice page asks which (/sign-in/choose): the
// accounts offered are kept in the session, never taken from the form, and the choice is throttled and audited as a
// sign-in.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, completeChosenSignIn, recordSignOut, type SignInChoice } from '../../admin/sign-in.js';
import { dashboardTarget } from '../../domain/dashboard-target.js';
import { CsrfOnlyForm, SignInForm, SignInQuery } from '../../../schemas/dashboard/forms.js';
import { ChooseAccountForm } from '../../../schemas/dashboard/people.js';
import { clientIp, formProblem } from '../../views/form-problem.js';

declare module 'fastify' {
  interface Session {
    /** Between the password check and the choice of account: what the password opened, for a few minutes. */
    signInChoice?: { choices: SignInChoice[]; email: string; next: string; at: number };
  }
}

export const SIGN_IN_REFUSED = 'The email or password is not right.';

/** How long the choice page stays usable after the password was checked. */
export const SIGN_IN_CHOICE_MS = 5 * 60 * 1000;
const CHOOSE_PATH = '/dashboard/sign-in/choose';
const CHOICE_LAPSED = 'That took too long: sign in again.';

function tooMany(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

/** A new session (new id, the old one destroyed): an id planted before sign-in is worth nothing after it. */
async function startSession(request: FastifyRequest, userId: string, now: Date): Promise<void> {
  await request.session.regenerate();
  request.session.userId = userId;
  request.session.authenticatedAt = now.getTime();
}

export default async function signIn(fastify: FastifyInstance) {
  /** The pending choice of this session, when it has one that has not lapsed. */
  const pendingChoice = (request: FastifyRequest) => {
    const pending = request.session.signInChoice;
    if (!pending) return null;
    const age = fastify.now().getTime() - pending.at;
    return age >= 0 && age <= SIGN_IN_CHOICE_MS ? pending : null;
  };
  const choosePage = (reply: FastifyReply, choices: SignInChoice[], status = 200, problem: string | null = null) =>
    reply.code(status).page('choose-account', {
      title: 'Choose an account',
      choices: choices.map(({ userId, accountName }) => ({ userId, accountName })),
      problem,
    });

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
      if (result.ok === false)
        return reply.code(401).page('sign-in', { title: 'Sign in', email, next, problem: SIGN_IN_REFUSED });
      if (result.ok === 'choose') {
        // No user is signed in yet: the session holds only what the password opened, for the next step.
        request.session.signInChoice = { choices: result.choices, email, next, at: now.getTime() };
        return reply.redirect(CHOOSE_PATH, 303);
      }
      await startSession(request, result.userId, now);
      return reply.redirect(next, 303);
    },
  );

  fastify.get(CHOOSE_PATH.replace('/dashboard', ''), { schema: { hide: true } }, async (request, reply) => {
    const pending = pendingChoice(request);
    if (!pending) return reply.redirect('/dashboard/sign-in', 303);
    return choosePage(reply, pending.choices);
  });

  fastify.post<{ Body: ChooseAccountForm }>(
    CHOOSE_PATH.replace('/dashboard', ''),
    { schema: { hide: true, body: ChooseAccountForm }, attachValidation: true },
    async (request, reply) => {
      const pending = pendingChoice(request);
      if (!pending) {
        delete request.session.signInChoice;
        return reply
          .code(400)
          .page('sign-in', { title: 'Sign in', email: '', next: '/dashboard', problem: CHOICE_LAPSED });
      }
      const problem = formProblem(request);
      if (problem) return choosePage(reply, pending.choices, 400, problem);
      const verdict = await fastify.signInAttempt(clientIp(request), pending.email);
      if (!verdict.allowed) {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        return choosePage(reply, pending.choices, 429, tooMany(verdict.retryAfterSeconds));
      }
      const now = fastify.now();
      const result = await completeChosenSignIn(fastify.storage, {
        userId: request.body.user.toLowerCase(),
        offered: pending.choices.map((c) => c.userId),
        ip: clientIp(request),
        now,
      });
      if (!result.ok) return choosePage(reply, pending.choices, 400, 'Choose one of the accounts below.');
      await startSession(request, result.userId, now);
      return reply.redirect(pending.next, 303);
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
