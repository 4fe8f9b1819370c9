// The dashboard's plugins, registered into the dashboard's scope (fastify-plugin, so their hooks, decorators and error
// handler reach its routes and nothing outside /dashboard): helmet, the session (cookie and store), form bodies, CSRF,
// views, the viewer, tenancy, the scoped reads, roles and the admin binding, request checks, limiters, pages, the
// response guard and the one error handler (a refused form back on its page; else the HTML error pages). The
// external plugins' options are here, in one place; src/routes/dashboard only registers routes.
import fp from 'fastify-plugin';
import csrf, { type FastifyCsrfProtectionOptions } from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import multipart, { type FastifyMultipartOptions } from '@fastify/multipart';
import sensible from '@fastify/sensible';
import view, { type FastifyViewOptions } from '@fastify/view';
import path from 'node:path';
import { Eta } from 'eta';
import { DASHBOARD_IMPORT_MAX_BYTES } from '../../src/domain/do-not-call.js';
import { VIEWS_DIR } from '../../src/paths.js';
import { mailEnabledLocals } from '../mailer.js';
import admin from './admin.js';
import busy from './busy.js';
import errors from './errors.js';
import forgotPasswordLimiter from './forgot-password-limiter.js';
import pages from './pages.js';
import requestChecks from './request-checks.js';
import roles from './roles.js';
import responseGuard from './response-guard.js';
import scoped from './scoped.js';
import session from './session.js';
import signInLimiter from './sign-in-limiter.js';
import tenancy from './tenancy.js';
import viewer from './viewer.js';

export interface DashboardOptions {
  sessionIdleMinutes: number;
  sessionMaxHours: number;
}

/** The CSRF secret's cookie: `__Host-` and HttpOnly like the session's (./session.ts), for the same reasons. */
export const CSRF_COOKIE = '__Host-oct_csrf';

/**
 * Tokens bound to a secret kept in its own cookie, not in the session: the sign-in form needs a token before anyone
 * is signed in, and a visitor who only looks at it must not make a row in `sessions`. Unsigned: `__Host-` keeps a
 * sibling subdomain (or plain http) from planting a secret, and a forged one gives nothing away; signing would need
 * a secret shared by every replica. Each form still needs the token and a same-site Origin (request-checks.ts).
 */
const csrfOptions: FastifyCsrfProtectionOptions = {
  sessionPlugin: '@fastify/cookie',
  cookieKey: CSRF_COOKIE,
  cookieOpts: { path: '/', secure: true, httpOnly: true, sameSite: 'lax' },
  getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
};

/**
 * File uploads (the do-not-call list's CSV import, a multipart form). @fastify/multipart's parser only marks a
 * multipart request: nothing of its body is read before the handler, so before the session and the CSRF checks. Only
 * a route whose config says `multipart: true` takes one; it reads the parts itself (its CSRF token first) and streams
 * the file (src/routes/dashboard/do-not-call-import.ts). Any other route answers 415 unread (the preValidation hook below).
 * Bounded: one file, a few short fields; the file stops one byte past the import's limit, without an error, so the
 * route can tell "too large" in its own words.
 */
const multipartOptions: FastifyMultipartOptions = {
  throwFileSizeLimit: false,
  limits: { fileSize: DASHBOARD_IMPORT_MAX_BYTES + 1, files: 1, fields: 4, fieldSize: 1024, parts: 5, headerPairs: 20 },
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route reads a multipart body itself (after its checks); every other dashboard route refuses one. */
    multipart?: boolean;
  }
}

/**
 * A strict CSP: same-origin styles, images and scripts only (the self-hosted htmx and the scripts of
 * src/views/assets/; no inline script, no eval: htmx runs with allowEval off), requests (htmx's live refresh) and
 * forms to this origin only, no framing. HSTS for a year; no Referer leaves the site.
 */
const helmetOptions: FastifyHelmetOptions = {
  global: true,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  },
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'same-origin' },
  crossOriginEmbedderPolicy: false,
};

/** The templates, each beside its page model (src/views/pages/<page>.eta and <page>.ts). */
const PAGES_DIR = path.join(VIEWS_DIR, 'pages');

/** Eta with escaping on (`<%= %>` escapes; `<%~ %>` is for the layout's body only). */
function viewOptions(): FastifyViewOptions {
  return {
    engine: { eta: new Eta({ views: PAGES_DIR, autoEscape: true, cache: true }) },
    templates: PAGES_DIR,
    production: true,
  };
}

/** The dashboard's helmet headers, for `/` too (outside the dashboard's scope): HSTS is learnt at the front door. */
export const dashboardHelmet = fp(
  async (fastify) => {
    await fastify.register(helmet, helmetOptions);
  },
  { name: 'dashboard-helmet', fastify: '5.x' },
);

export default fp<DashboardOptions>(
  async (fastify, options) => {
    await fastify.register(sensible);
    await fastify.register(dashboardHelmet);
    await fastify.register(session, {
      idleMs: options.sessionIdleMinutes * 60_000,
      maxMs: options.sessionMaxHours * 3_600_000,
    });
    await fastify.register(formbody);
    await fastify.register(csrf, csrfOptions);
    await fastify.register(multipart, multipartOptions);
    // Before request-checks' CSRF check (a preValidation hook too): a multipart body elsewhere is refused unread.
    fastify.addHook('preValidation', async (request) => {
      if (request.isMultipart() && request.routeOptions.config.multipart !== true)
        throw fastify.httpErrors.unsupportedMediaType('This page takes no file: send the form from its page.');
    });
    await fastify.register(view, viewOptions());
    await fastify.register(viewer);
    await fastify.register(tenancy);
    await fastify.register(scoped);
    // After tenancy (its onRoute resolves a route's `:id` first): a role is checked where the request acts.
    await fastify.register(roles);
    await fastify.register(admin);
    await fastify.register(requestChecks);
    await fastify.register(signInLimiter);
    await fastify.register(forgotPasswordLimiter);
    await fastify.register(mailEnabledLocals);
    await fastify.register(pages);
    await fastify.register(busy);
    // After every plugin with an onSend hook (@fastify/session's above all).
    await fastify.register(responseGuard);
    await fastify.register(errors);
  },
  { name: 'dashboard', fastify: '5.x', dependencies: ['config', 'db', 'mailer', 'redis'] },
);
