// Access gating after authentication: the API-access switch (the agency's covers its clients), then the plan.
import fp from 'fastify-plugin';
import { planAllowsApi } from '../src/domain/api-access.js';
import { AppError } from '../src/errors.js';

export default fp(
  async (fastify) => {
    fastify.addHook('onRequest', async (request) => {
      const principal = request.principal;
      if (!principal) throw new AppError('INVALID_API_KEY');
      if (!principal.apiAccessEnabled) throw new AppError('API_ACCESS_DISABLED');
      if (!planAllowsApi(principal.plan)) throw new AppError('PLAN_REQUIRED');
    });
  },
  { name: 'access', fastify: '5.x', dependencies: ['bearer-auth'] },
);
