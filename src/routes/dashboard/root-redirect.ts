// `/` is the dashboard's front door (and /favicon.ico its icon's). It is outside the dashboard's scope, so src/app.ts registers the dashboard's
// helmet headers around it (HSTS above all: a first visit to `/` is where a browser should learn to use https only).
import type { FastifyInstance } from 'fastify';

export default async function rootRedirect(fastify: FastifyInstance) {
  fastify.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
  // A browser asks for /favicon.ico on its own (before or without reading <link rel="icon">): the dashboard's icon.
  fastify.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('/dashboard/assets/favicon.svg', 301),
  );
}
