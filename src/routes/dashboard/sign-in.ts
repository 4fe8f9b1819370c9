// Sign in (GET shows the form, POST checks it) and sign out. One message for an unknown email and a wrong password;
// attempts are throttled per IP and per email; a new session id at sign-in (no session fixation). When one email has
// users in several accounts and the password opens more than one, a choice page asks which (/sign-in/choose): the
// accounts offered are kept in the session, never taken from the form, and the choice is throttled and audited as a
// sign-in.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, completeChosenSignIn, recordSignOut, type SignInChoice } from '../../admin/sign-in.js';
import { dashboardTarget } from '../../domain/dashboard-target.js';
import { CsrfOnlyForm, SignInForm, SignInQuery } from '../../../schemas/dashboard/forms.js';
import { ChooseAccountForm } from '../../../schemas/dashboard/people.js';
import { FormProblem, type FormFailure } from '../../views/form-problem.js';

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

/** The pending choice of this session, when it has one that has not lapsed. */
function pendingChoice(request: FastifyRequest) {
  const pending = request.session.signInChoice;
  if (!pending) return null;
  const age = request.server.now().getTime() - pending.at;
  return age >= 0 && age <= SIGN_IN_CHOICE_MS ? pending : null;
}

function choosePage(reply: FastifyReply, choices: SignInChoice[], status = 200, problem: string | null = null) {
  return reply.code(status).page('choose-account', {
    title: 'Choose an account',
    choices: choices.map(({ userId, accountName }) => ({ userId, accountName })),
    problem,
  });
}

/** The choice lapsed (or was never made): the sign-in page again. */
function choiceLapsed(request: FastifyRequest, reply: FastifyReply) {
  delete request.session.signInChoice;
  return reply.code(400).page('sign-in', { title: 'Sign in', email: '', next: '/dashboard', problem: CHOICE_LAPSED });
}

/** A refused sign-in: the form again, with the email typed (none when the form itself was not valid). */
function signInFailure(request: FastifyRequest, reply: FastifyReply, failure: FormFailure) {
  const body = request.body as Partial<SignInForm> | undefined;
  const next = dashboardTarget(body?.next) ?? '/dashboard';
  const email = failure.invalid ? '' : (body?.email ?? '');
  return reply.code(failure.status).page('sign-in', { title: 'Sign in', email, next, problem: failure.message });
}

const signIn: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/sign-in',
    { config: { role: 'public' }, schema: { hide: true, querystring: SignInQuery }, attachValidation: true },
    async (request, reply) => {
      const next = dashboardTarget(request.query?.next) ?? '/dashboard';
      if (request.viewer) return reply.redirect(next, 303);
      return reply.page('sign-in', { title: 'Sign in', email: '', next, problem: null });
    },
  );

  fastify.post(
    '/sign-in',
    {
      schema: { hide: true, body: SignInForm },
      attachValidation: true,
      config: { role: 'public', formFailure: signInFailure },
    },
    async (request, reply) => {
      const next = dashboardTarget(request.body.next) ?? '/dashboard';
      const { email, password } = request.body;
      const verdict = await fastify.signInAttempt(request.ip, email);
      if (!verdict.allowed) {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        throw new FormProblem(tooMany(verdict.retryAfterSeconds), 429);
      }
      const now = request.admin.now();
      const result = await request.admin.run(authenticate, { email, password, ip: request.ip, now });
      if (result.ok === false) throw new FormProblem(SIGN_IN_REFUSED, 401);
      if (result.ok === 'choose') {
        // No user is signed in yet: the session holds only what the password opened, for the next step.
        request.session.signInChoice = { choices: result.choices, email, next, at: now.getTime() };
        return reply.redirect(CHOOSE_PATH, 303);
      }
      await startSession(request, result.userId, now);
      return reply.redirect(next, 303);
    },
  );

  fastify.get(
    CHOOSE_PATH.replace('/dashboard', ''),
    { config: { role: 'public' }, schema: { hide: true } },
    async (request, reply) => {
      const pending = pendingChoice(request);
      if (!pending) return reply.redirect('/dashboard/sign-in', 303);
      return choosePage(reply, pending.choices);
    },
  );

  fastify.post(
    CHOOSE_PATH.replace('/dashboard', ''),
    {
      schema: { hide: true, body: ChooseAccountForm },
      attachValidation: true,
      config: {
        role: 'public',
        formFailure: (request, reply, { status, message }) => {
          const pending = pendingChoice(request);
          return pending ? choosePage(reply, pending.choices, status, message) : choiceLapsed(request, reply);
        },
      },
    },
    async (request, reply) => {
      const pending = pendingChoice(request);
      if (!pending) return choiceLapsed(request, reply);
      const verdict = await fastify.signInAttempt(request.ip, pending.email);
      if (!verdict.allowed) {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        throw new FormProblem(tooMany(verdict.retryAfterSeconds), 429);
      }
      const now = request.admin.now();
      const result = await request.admin.run(completeChosenSignIn, {
        userId: request.body.user.toLowerCase(),
        offered: pending.choices.map((c) => c.userId),
        ip: request.ip,
        now,
      });
      if (!result.ok) throw new FormProblem('Choose one of the accounts below.');
      await startSession(request, result.userId, now);
      return reply.redirect(pending.next, 303);
    },
  );

  fastify.post(
    '/sign-out',
    { config: { role: 'public' }, schema: { hide: true, body: CsrfOnlyForm } },
    async (request, reply) => {
      if (request.viewer)
        await request.admin.run(recordSignOut, { userId: request.viewer.id, ip: request.ip, now: request.admin.now() });
      await request.session.destroy();
      reply.clearSessionCookie();
      return reply.redirect('/dashboard/sign-in', 303);
    },
  );
};

export default signIn;
