// The dashboard: one encapsulated plugin under /dashboard. Cookies, sessions, CSRF, helmet, form bodies, views and
// HTML errors are registered here and nowhere else, so none of their hooks runs on /api/v1 or /telephony.
//
// Building a page: a file here exporting a plugin that adds its routes with `hide: true` (not part of the API's
// OpenAPI document), guards from plugins/dashboard/guards.ts as preHandler (requireUser, requireAgencyUser,
// requireRecentSignIn), `managedAccount()` for any account id it is given, a TypeBox form from
// schemas/dashboard/ with `attachValidation: true`, `reply.page()` to render and `reply.seeOther()` after a
// POST; changes go through the same src/admin functions callctl uses, which write the audit log. Register the file
// below and add its routes to test/dashboard/tenancy.test.ts.
import type { FastifyError, FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import sensible from '@fastify/sensible';
import session from '@fastify/session';
import view from '@fastify/view';
import { csrfOptions, helmetOptions, sessionOptions, viewOptions } from '../../../plugins/dashboard/options.js';
import pages from '../../../plugins/dashboard/pages.js';
import requestChecks from '../../../plugins/dashboard/request-checks.js';
import responseGuard from '../../../plugins/dashboard/response-guard.js';
import { PostgresSessionStore } from '../../../plugins/dashboard/session-store.js';
import signInLimiter from '../../../plugins/dashboard/sign-in-limiter.js';
import forgotPasswordLimiter from '../../../plugins/dashboard/forgot-password-limiter.js';
import { mailEnabledLocals } from '../../../plugins/mailer.js';
import viewer from '../../../plugins/dashboard/viewer.js';
import { clearHeadersForError } from '../../../plugins/errors.js';
import account from './account.js';
import apiWebhooks from './api-webhooks.js';
import agents from './agents.js';
import assets from './assets.js';
import auditLog from './audit-log.js';
import calls from './calls.js';
import clients from './clients.js';
import confirmPassword from './confirm-password.js';
import forgotPassword from './forgot-password.js';
import overview from './overview.js';
import setPassword from './set-password.js';
import signIn from './sign-in.js';
import users from './users.js';

export interface DashboardOptions {
  sessionIdleMinutes: number;
  sessionMaxHours: number;
}

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Page not found',
  405: 'Not allowed',
  413: 'Too large',
  415: 'Not a form',
  429: 'Too many attempts',
};

export default async function dashboard(fastify: FastifyInstance, options: DashboardOptions) {
  const store = new PostgresSessionStore(
    fastify.prisma,
    { idleMs: options.sessionIdleMinutes * 60_000, maxMs: options.sessionMaxHours * 3_600_000 },
    () => fastify.now(),
    (error) => fastify.log.error({ err: error }, 'a session store callback threw twice'),
  );
  await fastify.register(sensible);
  await fastify.register(helmet, helmetOptions);
  await fastify.register(cookie);
  await fastify.register(session, sessionOptions(store));
  await fastify.register(formbody);
  await fastify.register(csrf, csrfOptions);
  await fastify.register(view, viewOptions());
  await fastify.register(viewer);
  await fastify.register(requestChecks);
  await fastify.register(signInLimiter);
  await fastify.register(forgotPasswordLimiter);
  await fastify.register(mailEnabledLocals);
  await fastify.register(pages);
  // After every plugin with an onSend hook (@fastify/session's above all).
  await fastify.register(responseGuard);

  fastify.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'dashboard error');
    // The CSRF plugin's own messages are for developers; people get one sentence that says what to do.
    const message = error.code?.startsWith('FST_CSRF')
      ? 'This form has expired. Go back, reload the page and try again.'
      : status >= 500
        ? 'Something went wrong on our side. Try again in a moment.'
        : status === 404
          ? 'There is no such page.'
          : error.message;
    if (status >= 500 && request.session) (request as { session: unknown }).session = null;
    clearHeadersForError(reply);
    return reply.code(status).page('error', { title: ERROR_TITLES[status] ?? 'Error', message });
  });
  fastify.setNotFoundHandler(async (_request, reply) =>
    reply.code(404).page('error', { title: ERROR_TITLES[404]!, message: 'There is no such page.' }),
  );

  // `/dashboard/` is the same page as `/dashboard`: one address for it (the trailing slash is not ignored elsewhere).
  fastify.get('/', { schema: { hide: true }, prefixTrailingSlash: 'slash' }, async (_request, reply) =>
    reply.redirect('/dashboard', 302),
  );

  await fastify.register(assets);
  await fastify.register(signIn);
  await fastify.register(setPassword);
  await fastify.register(forgotPassword);
  await fastify.register(confirmPassword);
  await fastify.register(overview);
  await fastify.register(account);
  await fastify.register(auditLog);
  await fastify.register(apiWebhooks);
  await fastify.register(agents);
  await fastify.register(calls);
  await fastify.register(clients);
  await fastify.register(users);
}
