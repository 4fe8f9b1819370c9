// Rendering a dashboard page and answering a form: `reply.page(template, model)` renders through the layout with the
// viewer, navigation, what the viewer's role may do (`can`), CSRF token and one-time notice; `reply.seeOther(path,
// notice)` is POST -> redirect -> GET.
// The model's type is the template's (src/views/page-models.ts): a page and its template cannot drift.
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dashboardTarget } from '../../src/domain/dashboard-target.js';
import { hasRole } from '../../src/domain/roles.js';
import type { LayoutModel, PageData, PageName } from '../../src/views/page-models.js';
import { navigationFor } from '../../src/views/navigation.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Renders `src/views/pages/<template>.eta` in the layout; never cached (pages show per-user data). */
    page<K extends PageName>(template: K, model: PageData<K>): FastifyReply;
    /** 303 to `path` (a /dashboard path), with a notice the next page shows once. */
    seeOther(path: string, notice?: { kind: 'ok' | 'error'; text: string }): FastifyReply;
  }
}

/** The header's time switch: the viewer's own zone (null: UTC), whether this session shows UTC, and where to return. */
function timesSwitch(request: FastifyRequest): LayoutModel['times'] {
  const own = request.viewer?.timezone;
  return {
    own: own && own !== 'UTC' ? own : null,
    inUtc: request.session?.timesInUtc === true,
    // A form's answer (a POST rendering a problem) has no page to come back to: the Overview is one.
    back: request.method === 'GET' ? request.url : '/dashboard',
  };
}

export default fp(
  async (fastify) => {
    fastify.decorateReply('page', function page<
      K extends PageName,
    >(this: FastifyReply, template: K, model: PageData<K>) {
      const request = this.request;
      const session = request.session;
      const flash = session?.flash;
      if (flash) delete session.flash;
      const path = request.url.split('?')[0] ?? '/dashboard';
      this.header('cache-control', 'no-store');
      const layout: LayoutModel = {
        title: model.title,
        viewer: request.viewer,
        navigation: request.viewer ? navigationFor(request.viewer, path) : [],
        // The viewer's role where the request acts (plugins/dashboard/roles.ts): what the page offers them to do.
        can: (least) => Boolean(request.viewer) && hasRole(request.role, least),
        // Made only by a template that has a form (`it.csrf()`): a token sets the CSRF cookie, and a page without a
        // form (an error, a visitor's 404) should not. A failed request (5xx, no session) has none.
        csrf: () => (session ? this.generateCsrf() : ''),
        hasSession: Boolean(session),
        flash: flash ?? null,
        pageUrl: request.url,
        times: request.viewer && timesSwitch(request),
      };
      return this.view(`${template}.eta`, { ...model, ...layout });
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
