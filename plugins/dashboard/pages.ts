// Rendering a dashboard page and answering a form: `reply.page(template, data)` renders through the layout with the
// viewer, navigation, CSRF token and one-time notice; `reply.seeOther(path, notice)` is POST -> redirect -> GET.
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
import { navigationFor } from './navigation.js';

export interface PageData {
  /** The page's <title> and heading. */
  title: string;
  [key: string]: unknown;
}

declare module 'fastify' {
  interface FastifyReply {
    /** Renders `src/views/<template>.eta` in the layout; never cached (pages show per-user data). */
    page(template: string, data: PageData): FastifyReply;
    /** 303 to `path` (a /dashboard path), with a notice the next page shows once. */
    seeOther(path: string, notice?: { kind: 'ok' | 'error'; text: string }): FastifyReply;
  }
}

/** Any origin would do: a target is parsed against it only to learn whether it stays on it. */
const PARSE_BASE = 'https://dashboard.invalid';
/** Longer than any page of ours with its query (the form field allows 2048). */
const MAX_TARGET_LENGTH = 2048;

/**
 * Where a `next` may send the browser: one of our pages, as `URL` re-serialises it (dot segments resolved, every
 * character outside printable ASCII percent-encoded, the fragment dropped), so a Location header built from it can
 * hold nothing a client or `writeHead` would misread. Null for anything else: another origin (`//host`, a scheme),
 * a path outside /dashboard (`/dashboard/../api`), and a backslash or a control character, which `URL` would
 * silently turn into a slash or drop.
 */
export function dashboardTarget(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_TARGET_LENGTH || !value.startsWith('/')) return null;
  // eslint-disable-next-line no-control-regex -- the control characters are what this refuses
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, PARSE_BASE);
  } catch {
    return null;
  }
  if (url.origin !== PARSE_BASE || !(url.pathname === '/dashboard' || url.pathname.startsWith('/dashboard/')))
    return null;
  const target = `${url.pathname}${url.search}`;
  return /^[\x21-\x7e]+$/.test(target) && target.length <= MAX_TARGET_LENGTH ? target : null;
}

/** Only our own pages, already in the form `dashboardTarget` gives them. */
export function isDashboardPath(value: unknown): value is string {
  return typeof value === 'string' && dashboardTarget(value) === value;
}

export default fp(
  async (fastify) => {
    fastify.decorateReply('page', function page(this: FastifyReply, template: string, data: PageData) {
      const request = this.request;
      const session = request.session;
      const flash = session?.flash;
      if (flash) delete session.flash;
      const path = request.url.split('?')[0] ?? '/dashboard';
      this.header('cache-control', 'no-store');
      return this.view(`${template}.eta`, {
        ...data,
        viewer: request.viewer,
        navigation: request.viewer ? navigationFor(request.viewer, path) : [],
        // Made only by a template that has a form (`it.csrf()`): a token sets the CSRF cookie, and a page without a
        // form (an error, a visitor's 404) should not. A failed request (5xx, no session) has none.
        csrf: () => (session ? this.generateCsrf() : ''),
        hasSession: Boolean(session),
        flash: flash ?? null,
      });
    });
    fastify.decorateReply(
      'seeOther',
      function seeOther(this: FastifyReply, path: string, notice?: { kind: 'ok' | 'error'; text: string }) {
        if (notice && this.request.session) this.request.session.flash = notice;
        return this.redirect(dashboardTarget(path) ?? '/dashboard', 303);
      },
    );
  },
  {
    name: 'dashboard-pages',
    fastify: '5.x',
    dependencies: ['@fastify/view', '@fastify/csrf-protection', 'dashboard-viewer'],
  },
);
