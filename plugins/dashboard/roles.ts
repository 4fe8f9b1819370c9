// Roles on the dashboard (src/domain/roles.ts), declared by every route and checked by one hook: each route's
// `config.role` says who may use it ('public', or the least role of a signed-in user); the hook runs after the
// family's guards and its `:id` (another tenant's object stays a 404) and refuses a lesser role with the 403 page
// that names the role needed. The role checked is the viewer's in the account the route acts in: that of the object
// the family resolved, or `config.roleAccount`'s (an account named by the form), else their own. A route without a
// declaration cannot be registered. `request.admin.run` checks the action's own declaration against the same role.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { hasRole, roleIn, roleNeeded, type Role, type RouteRole } from '../../src/domain/roles.js';
import { isUuid } from '../../schemas/uuid.js';
import { managedAccountId } from './tenancy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may use this route: 'public', or a signed-in user with at least this role where it acts. Required. */
    role?: RouteRole;
    /** The account this route acts in when a form names it (not an `:id`): one of the viewer's, else 404. */
    roleAccount?: (request: FastifyRequest) => unknown;
  }
  interface FastifyRequest {
    /** The viewer's role in the account this request acts in (only for a signed-in viewer: throws elsewhere). */
    readonly role: Role;
  }
}

const kRole = Symbol('dashboard role here');
type WithRole = FastifyRequest & { [kRole]?: Role };

/** The account the request acts in, or null for one the viewer does not manage (answered 404). */
async function actingAccount(request: FastifyRequest): Promise<string | null> {
  const named = request.routeOptions.config.roleAccount?.(request);
  if (named === undefined) return managedAccountId(request) ?? request.user.accountId;
  if (typeof named !== 'string' || !isUuid(named)) return null;
  return (await request.scoped.findAccountInScope(named))?.id ?? null;
}

export default fp(
  async (fastify) => {
    fastify.decorateRequest('role', {
      getter(this: WithRole): Role {
        return this[kRole] ?? this.user.role;
      },
    });
    fastify.addHook('onRoute', (route: RouteOptions) => {
      const least = route.config?.role;
      if (least === undefined)
        throw new Error(
          `${String(route.method)} ${route.url} declares no role (config.role: plugins/dashboard/roles.ts)`,
        );
      if (least === 'public') return;
      const checkRole = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        // Signed in, else the sign-in page (the signed-in family's hook sent them there already).
        if (!request.viewer) return fastify.dashboardGuards.requireUser.call(this, request, reply);
        const accountId = await actingAccount(request);
        if (accountId === null) throw fastify.httpErrors.notFound();
        const role = roleIn(request.viewer, accountId);
        (request as WithRole)[kRole] = role;
        if (!hasRole(role, least)) throw fastify.httpErrors.forbidden(roleNeeded(least));
      };
      const own = route.preHandler;
      route.preHandler = own === undefined ? [checkRole] : Array.isArray(own) ? [...own, checkRole] : [own, checkRole];
    });
  },
  {
    name: 'dashboard-roles',
    fastify: '5.x',
    dependencies: ['dashboard-tenancy', 'dashboard-scoped', '@fastify/sensible'],
  },
);
