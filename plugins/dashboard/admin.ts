// `request.admin`: the src/admin functions (the ones callctl uses, which write the audit log) bound to this request's
// storage, actor and clock, so a dashboard route changes state without holding the storage. The signed-in user's
// Actor is made here and nowhere else.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actionRole } from '../../src/admin/action-roles.js';
import type { Actor } from '../../src/admin/audit.js';
import { hasRole, roleNeeded } from '../../src/domain/roles.js';
import type { Storage } from '../../src/storage/index.js';

export interface AdminBinding {
  /** The signed-in user acting, with the request's IP (only on the routes of the signed-in family: throws elsewhere). */
  readonly actor: Actor;
  /** The app's clock. */
  now(): Date;
  /**
   * `action(storage, ...args)`: an src/admin function, run on the service's storage when the viewer's role where the
   * request acts includes the action's (src/admin/action-roles.ts), else the 403 page.
   */
  run<A extends unknown[], R>(action: (storage: Storage, ...args: A) => R, ...args: A): R;
}

declare module 'fastify' {
  interface FastifyRequest {
    readonly admin: AdminBinding;
  }
}

function bindingOf(fastify: FastifyInstance, request: FastifyRequest): AdminBinding {
  return {
    get actor(): Actor {
      return { kind: 'user', userId: request.user.id, ip: request.ip, scope: request.scope };
    },
    now: () => fastify.now(),
    run: (action, ...args) => {
      const least = actionRole(action);
      if (least === undefined || least === 'operator')
        throw new Error(`${action.name} is no action the dashboard may run (src/admin/action-roles.ts)`);
      if (least !== 'public' && !hasRole(request.role, least)) throw fastify.httpErrors.forbidden(roleNeeded(least));
      return action(fastify.storage, ...args);
    },
  };
}

export default fp(
  async (fastify) => {
    fastify.decorateRequest('admin', {
      getter(this: FastifyRequest): AdminBinding {
        return bindingOf(fastify, this);
      },
    });
  },
  { name: 'dashboard-admin', fastify: '5.x', dependencies: ['config', 'db', 'dashboard-tenancy'] },
);
