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

/** Only our own pages: a path under /dashboard, never `//host` or a scheme. */
export function isDashboardPath(value: unknown): value is string {
  return typeof value === 'string' && /^\/dashboard(\/[^/\\]|$|\?)/.test(value) && !value.includes('\\') && !/[\r\n]/.test(value);
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
        // Made only by a template that has a form (`it.csrf()`): a token needs a session in the store, and a page
        // without a form (an error, a visitor's 404) should not make one. A failed request (5xx, no session) has none.
        csrf: () => (session ? this.generateCsrf() : ''),
        hasSession: Boolean(session),
        flash: flash ?? null,
      });
    });
    fastify.decorateReply('seeOther', function seeOther(this: FastifyReply, path: string, notice?: { kind: 'ok' | 'error'; text: string }) {
      if (notice && this.request.session) this.request.session.flash = notice;
      return this.redirect(isDashboardPath(path) ? path : '/dashboard', 303);
    });
  },
  { name: 'dashboard-pages', fastify: '5.x', dependencies: ['@fastify/view', '@fastify/csrf-protection', 'dashboard-viewer'] },
);
