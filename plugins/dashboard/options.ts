// The options of every external plugin of the dashboard scope, in one place: cookie, session, CSRF, helmet, views.
import { randomBytes } from 'node:crypto';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifySessionOptions, SessionStore } from '@fastify/session';
import type { FastifyCsrfProtectionOptions } from '@fastify/csrf-protection';
import type { FastifyViewOptions } from '@fastify/view';
import { Eta } from 'eta';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';

/** Templates and the stylesheet are read from the source tree (no build step), in development and in the image. */
export const VIEWS_DIR = path.join(PROJECT_ROOT, 'src', 'views');

/**
 * `__Host-`: the browser keeps it only when Secure, Path=/ and without Domain, so no sibling subdomain can set or
 * shadow it. HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs). A browser-session cookie
 * (no Max-Age): the server enforces the idle and absolute timeouts.
 */
export const SESSION_COOKIE = '__Host-oct_session';
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The cookie carries a 256-bit random id and the server keeps only its digest, so signing the cookie would add no
 * protection (a forged id finds no session) but would need a secret shared by every replica. The signer only sorts
 * out values that cannot be one of our ids, before any lookup.
 */
const unsignedIds = {
  sign: (value: string) => value,
  unsign: (value: string) =>
    SESSION_ID.test(value) ? { valid: true, renew: false, value } : { valid: false, renew: false, value: null },
};

export function sessionOptions(store: SessionStore): FastifySessionOptions {
  return {
    secret: unsignedIds,
    cookieName: SESSION_COOKIE,
    cookie: { path: '/', secure: true, httpOnly: true, sameSite: 'lax' },
    idGenerator: () => randomBytes(32).toString('base64url'),
    store,
    // Every response of a session moves its last-seen time (the idle timeout); a visitor's session is stored only
    // once it holds something (a signed-in user; a notice for the next page).
    rolling: true,
    saveUninitialized: false,
  };
}

/** The CSRF secret's cookie: `__Host-` and HttpOnly like the session's, for the same reasons. */
export const CSRF_COOKIE = '__Host-oct_csrf';

/**
 * Tokens bound to a secret kept in its own cookie, not in the session: the sign-in form needs a token before anyone
 * is signed in, and a visitor who only looks at it must not make a row in `sessions`. Unsigned: `__Host-` keeps a
 * sibling subdomain (or plain http) from planting a secret, and a forged one gives nothing away; signing would need
 * a secret shared by every replica. Each form still needs the token and a same-site Origin (request-checks.ts).
 */
export const csrfOptions: FastifyCsrfProtectionOptions = {
  sessionPlugin: '@fastify/cookie',
  cookieKey: CSRF_COOKIE,
  cookieOpts: { path: '/', secure: true, httpOnly: true, sameSite: 'lax' },
  getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
};

/**
 * A strict CSP: same-origin styles and images, no script at all yet (a later self-hosted script needs only
 * script-src 'self'), no framing, forms posting only here. HSTS for a year; no Referer leaves the site.
 */
export const helmetOptions: FastifyHelmetOptions = {
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

/** Eta with escaping on (`<%= %>` escapes; `<%~ %>` is for the layout's body only). */
export function viewOptions(): FastifyViewOptions {
  return {
    engine: { eta: new Eta({ views: VIEWS_DIR, autoEscape: true, cache: true }) },
    templates: VIEWS_DIR,
    production: true,
  };
}
