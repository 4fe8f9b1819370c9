// `/` is the dashboard's front door.
import type { FastifyInstance } from 'fastify';

export default async function rootRedirect(fastify: FastifyInstance) {
  fastify.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
}
