// Tenancy of the dashboard in one place. Route families use it: the signed-in family's hook (`requireUser`) and the
// agency-only family's (`requireAgencyUser`) run for every route registered inside them; `request.user` and
// `request.scope` are the viewer and the accounts they may see; `resolveManaged` makes a family resolve an `:id` to
// the managed object (src/storage/dashboard-scope.ts) before any handler runs. Another tenant's object is a 404,
// never a 403: existence is not revealed.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler, RouteOptions } from 'fastify';
import type {} from '@fastify/sensible';
import { keptFields, type PendingForm } from '../../src/domain/pending-form.js';
import { isRecentSignIn } from '../../src/domain/recent-sign-in.js';
import { scopeOf, type Scope } from '../../src/domain/tenancy.js';
import type { ListedAgent } from '../../src/storage/index.js';
import type { CallDetail } from '../../src/storage/index.js';
import { type AccountInScope, type UserInScope } from '../../src/storage/index.js';
import type { ActiveUser } from '../../src/storage/index.js';

export const SIGN_IN_PATH = '/dashboard/sign-in';
export const CONFIRM_PASSWORD_PATH = '/dashboard/confirm-password';

/** What an `:id` of a route family resolves to. `own`: the viewer's own account, for a family without an id. */
export interface Managed {
  own: AccountInScope;
  account: AccountInScope;
  client: AccountInScope;
  agent: ListedAgent;
  user: UserInScope;
  call: CallDetail;
}
export type ManagedKind = keyof Managed;

export interface DashboardGuards {
  /** Signed in, or sent to the sign-in page (and back here afterwards): the signed-in family's hook. */
  requireUser: preHandlerAsyncHookHandler;
  /** An agency user; a client user gets the same 404 as for a page that does not exist: the agency family's hook. */
  requireAgencyUser: preHandlerAsyncHookHandler;
  /**
   * The password typed within the last 10 minutes (sign-in or re-entry), else the re-enter-password page, which
   * comes back to `returnTo` (default: this page for a GET, the overview otherwise). For actions that reveal or
   * replace a secret: a route's own preHandler, on the page that shows the button and the POST that does it.
   */
  requireRecentSignIn(returnTo?: (request: FastifyRequest) => string): preHandlerAsyncHookHandler;
}

declare module 'fastify' {
  interface Session {
    /** A form sent when the password had to be typed again, shown filled in after the re-check. */
    pendingForm?: PendingForm;
  }
  interface FastifyRequest {
    /** The signed-in user: only on the routes of the signed-in family (throws elsewhere). */
    readonly user: ActiveUser;
    /** The accounts `user` may see: only on the routes of the signed-in family (throws elsewhere). */
    readonly scope: Scope;
    /** The object the family resolved from this route's `:id` (throws when the family resolves none). */
    managed<K extends ManagedKind>(kind: K): Managed[K];
  }
  interface FastifyInstance {
    dashboardGuards: DashboardGuards;
    /**
     * Every route of this family whose path has `:<param>` (or, without `param`, every route) resolves it to the
     * `kind` object the viewer manages before its handler (after its own preHandlers), else answers 404.
     */
    resolveManaged(kind: ManagedKind, param?: string): void;
  }
}

const kManaged = Symbol('dashboard managed objects');
type WithManaged = FastifyRequest & { [kManaged]?: Partial<Managed> };

/**
 * The account this request acts in: that of the object its family resolved from the `:id` (a client, an account, a
 * user, an agent, a call; its own account for a family without an id), or null when it resolved none. The role a
 * route needs is the viewer's role there (plugins/dashboard/roles.ts).
 */
export function managedAccountId(request: FastifyRequest): string | null {
  const found = (request as WithManaged)[kManaged];
  if (!found) return null;
  return (
    found.client?.id ??
    found.account?.id ??
    found.own?.id ??
    found.user?.account.id ??
    found.agent?.accountId ??
    found.call?.accountId ??
    null
  );
}

/** Where to come back to after signing in or confirming the password: this page for a GET, else `fallback`. */
function returnPath(request: FastifyRequest, fallback: string): string {
  return request.method === 'GET' ? request.url : fallback;
}

const requireUser: preHandlerAsyncHookHandler = async function (request, reply) {
  if (request.viewer) return;
  await reply.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(returnPath(request, '/dashboard'))}`, 303);
};

const requireAgencyUser: preHandlerAsyncHookHandler = async function (request, reply) {
  if (!request.viewer) return requireUser.call(this, request, reply);
  if (request.viewer.accountKind !== 'agency') throw reply.server.httpErrors.notFound();
};

function requireRecentSignIn(returnTo?: (request: FastifyRequest) => string): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    if (!request.viewer) return requireUser.call(this, request, reply);
    if (isRecentSignIn(request.session.authenticatedAt, request.server.now())) return;
    const next = returnTo?.(request) ?? returnPath(request, '/dashboard');
    // A form sent meanwhile: its fields (never a password, secret or the CSRF token) wait in the session, and the
    // page at `next` shows them filled in after the re-check (src/domain/pending-form.ts).
    if (request.method === 'POST')
      request.session.pendingForm = {
        path: next,
        action: request.url,
        fields: keptFields(request.body),
        at: request.server.now().getTime(),
      };
    await reply.redirect(`${CONFIRM_PASSWORD_PATH}?next=${encodeURIComponent(next)}`, 303);
  };
}

const FINDERS: { [K in ManagedKind]: (request: FastifyRequest, id: string) => Promise<Managed[K] | null> } = {
  own: (request) => request.server.storage.scoped.findAccountInScope(request.scope, request.scope.accountId),
  account: (request, id) => request.server.storage.scoped.findAccountInScope(request.scope, id),
  client: (request, id) => request.server.storage.scoped.findClientInScope(request.scope, id),
  agent: (request, id) => request.server.storage.scoped.findAgentInScope(request.scope, id),
  user: (request, id) => request.server.storage.scoped.findUserInScope(request.scope, id),
  call: (request, id) => request.server.storage.scoped.findCallInScope(request.scope, id),
};

const kRules = Symbol('dashboard managed rules');
interface Rule {
  pattern: RegExp | null;
  resolve: preHandlerAsyncHookHandler;
}
type WithRules = FastifyInstance & { [kRules]?: Rule[] };

/** The rules of `instance`'s family and of the families around it, outermost first. */
function rulesOf(instance: FastifyInstance): Rule[] {
  const rules: Rule[] = [];
  for (let at: object | null = instance; at !== null; at = Object.getPrototypeOf(at) as object | null)
    if (Object.hasOwn(at, kRules)) rules.unshift(...(at as WithRules)[kRules]!);
  return rules;
}

/** The preHandler of a route declared on `instance`: resolves what its families' rules ask for its path. */
function familyResolver(instance: FastifyInstance): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    const url = request.routeOptions.url ?? '';
    for (const rule of rulesOf(instance))
      if (!rule.pattern || rule.pattern.test(url)) await rule.resolve.call(this, request, reply);
  };
}

function resolver(kind: ManagedKind, param: string | undefined): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    const id = param === undefined ? '' : ((request.params as Record<string, string | undefined>)[param] ?? '');
    const found = await FINDERS[kind](request, id);
    if (!found) throw reply.server.httpErrors.notFound();
    const target = request as WithManaged;
    target[kManaged] = { ...target[kManaged], [kind]: found };
  };
}

export default fp(
  async (fastify) => {
    fastify.decorate('dashboardGuards', { requireUser, requireAgencyUser, requireRecentSignIn });
    fastify.decorateRequest('user', {
      getter(this: FastifyRequest): ActiveUser {
        if (!this.viewer) throw new Error('request.user on a route outside the signed-in family');
        return this.viewer;
      },
    });
    fastify.decorateRequest('scope', {
      getter(this: FastifyRequest): Scope {
        return scopeOf(this.user);
      },
    });
    fastify.decorateRequest('managed', function <K extends ManagedKind>(this: WithManaged, kind: K): Managed[K] {
      const found = this[kManaged]?.[kind];
      if (!found) throw new Error(`request.managed('${kind}') on a route whose family resolves none`);
      return found;
    });
    // Every route of the dashboard's scope gets the resolving preHandler (after its own ones: a recent sign-in is asked
    // first); it applies, at request time, the rules its family and the families around it declared, so a rule
    // reaches the routes added before `resolveManaged` was called as well as those added after.
    fastify.addHook('onRoute', function (this: FastifyInstance, route: RouteOptions) {
      const resolve = familyResolver(this);
      const own = route.preHandler;
      route.preHandler = own === undefined ? [resolve] : Array.isArray(own) ? [...own, resolve] : [own, resolve];
    });
    fastify.decorate('resolveManaged', function (this: FastifyInstance, kind: ManagedKind, param?: string) {
      const pattern = param === undefined ? null : new RegExp(`/:${param}(?:/|$)`);
      const family = this as WithRules;
      // Its own list (a family inside another one reads both: rulesOf walks the instances it was made from).
      family[kRules] = [
        ...(Object.hasOwn(family, kRules) ? family[kRules]! : []),
        { pattern, resolve: resolver(kind, param) },
      ];
    });
  },
  { name: 'dashboard-tenancy', fastify: '5.x', dependencies: ['dashboard-viewer', '@fastify/sensible'] },
);
