// Account: the signed-in user's own settings. Their time zone (the dashboard's times; the header's switch to UTC and
// back posts here too), change the password (every other session ends) and sign out everywhere (every session ends,
// this one too).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { setOwnTimeZone } from '../../admin/user-time-zone.js';
import { changePassword, endAllSessions } from '../../admin/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/password-policy.js';
import { isOfferedZone, UTC_ALIASES, ZONE_REGIONS } from '../../domain/time-zones.js';
import { TimesShownForm, TimeZoneForm } from '../../../schemas/dashboard/account.js';
import { ChangePasswordForm, CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import { FormProblem } from '../../views/form-problem.js';
import type { PageData } from '../../views/page-models.js';

const POLICY = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH };
const ACCOUNT_PATH = '/dashboard/account';

/** The page with a problem of one form: the password's (above the form), or the zone sent and its problem. */
type Problems = { password?: string; zone?: { sent: string; problem: string } };

async function accountPage(request: FastifyRequest, problems: Problems = {}): Promise<PageData<'account'>> {
  const user = await request.scoped.viewerRow();
  const own = request.viewer?.timezone ?? null;
  const value = problems.zone?.sent.trim() ?? own ?? 'UTC';
  return {
    title: 'Account',
    lastSignIn: request.times.orNull(user?.lastSignInAt),
    policy: POLICY,
    problem: problems.password ?? null,
    zone: {
      value,
      fromBrowser: own === null && !problems.zone,
      problem: problems.zone?.problem ?? null,
      choices: {
        utcAliases: UTC_ALIASES,
        regions: ZONE_REGIONS,
        other: value === '' || isOfferedZone(value) ? null : value.slice(0, 100),
      },
    },
  };
}

const account: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/account', { config: { role: 'viewer' }, schema: { hide: true } }, async (request, reply) =>
    reply.page('account', await accountPage(request)),
  );

  fastify.post(
    '/account/time-zone',
    {
      schema: { hide: true, body: TimeZoneForm },
      attachValidation: true,
      config: {
        role: 'viewer',
        formFailure: async (request, reply, { status, message, fields }) => {
          const sent = (request.body as { timezone?: unknown } | undefined)?.timezone;
          const zone = { sent: typeof sent === 'string' ? sent : '', problem: fields.timezone ?? message };
          return reply.code(status).page('account', await accountPage(request, { zone }));
        },
      },
    },
    async (request, reply) => {
      const result = await request.admin.run(setOwnTimeZone, {
        zone: request.body.timezone,
        actor: request.admin.actor,
        now: request.admin.now(),
      });
      if (!result.ok) throw new FormProblem(result.problem, 400, { timezone: result.problem });
      // A zone just chosen is the one to see: the session's "Show in UTC" ends.
      delete request.session.timesInUtc;
      return reply.seeOther(ACCOUNT_PATH, { kind: 'ok', text: `Times are shown in ${result.zone} now.` });
    },
  );

  // The header's switch (layout.eta): this session shows UTC, or the user's zone again; back to the page it was on.
  fastify.post(
    '/account/times',
    { config: { role: 'viewer' }, schema: { hide: true, body: TimesShownForm } },
    async (request, reply) => {
      if (request.body.utc === '1') request.session.timesInUtc = true;
      else delete request.session.timesInUtc;
      return reply.seeOther(request.body.back ?? '/dashboard');
    },
  );

  fastify.post(
    '/account/password',
    {
      schema: { hide: true, body: ChangePasswordForm },
      attachValidation: true,
      config: {
        role: 'viewer',
        formFailure: async (request, reply, { status, message }) =>
          reply.code(status).page('account', await accountPage(request, { password: message })),
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
      await request.session.regenerate(['userId', 'timesInUtc']);
      request.session.authenticatedAt = now.getTime();
      const others = result.sessionsEnded === 1 ? '1 other session was' : `${result.sessionsEnded} other sessions were`;
      return reply.seeOther(ACCOUNT_PATH, {
        kind: 'ok',
        text: `Your password is changed; ${others} signed out.`,
      });
    },
  );

  fastify.post(
    '/account/sign-out-everywhere',
    { config: { role: 'viewer' }, schema: { hide: true, body: CsrfOnlyForm } },
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
