// `/` is the dashboard's front door. It is outside the dashboard's scope, so it gets the dashboard's helmet headers
// here (HSTS above all: a first visit to `/` is where a browser should learn to use https only).
import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import { helmetOptions } from '../../../plugins/dashboard/options.js';

export default async function rootRedirect(fastify: FastifyInstance) {
  await fastify.register(helmet, helmetOptions);
  fastify.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
}
