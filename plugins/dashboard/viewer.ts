// The signed-in user of a dashboard request as `request.viewer` (null when nobody is signed in). Read on every
// request, so a user disabled a moment ago is signed out at their next click, on every replica.
import fp from 'fastify-plugin';
import { type ActiveUser } from '../../src/storage/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: ActiveUser | null;
  }
}

export default fp(
  async (fastify) => {
    fastify.decorateRequest('viewer', null);
    fastify.addHook('onRequest', async (request) => {
      const userId = request.session.userId;
      if (!userId) return;
      const user = await fastify.storage.users.findActiveUser(userId);
      if (user) {
        request.viewer = user;
        return;
      }
      // Disabled (or gone) since the session began: the session ends, and the request goes on as a visitor's.
      await request.session.regenerate();
    });
  },
  { name: 'dashboard-viewer', fastify: '5.x', dependencies: ['@fastify/session'] },
);
