// The landing page after sign-in. A placeholder until the calls, agents and settings pages exist (the next issue).
import type { FastifyInstance } from 'fastify';
import { requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';

export default async function overview(fastify: FastifyInstance) {
  fastify.get('', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const viewer = viewerOf(request);
    return reply.page('overview', { title: 'Overview', accountName: viewer.accountName, isAgency: viewer.accountKind === 'agency' });
  });
}
