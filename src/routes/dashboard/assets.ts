// The dashboard's one stylesheet and its one script, from src/views/assets/ (read once; no build step). Cacheable for a day.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { VIEWS_DIR } from '../../../plugins/dashboard/options.js';

export default async function assets(fastify: FastifyInstance) {
  const css = await readFile(path.join(VIEWS_DIR, 'assets', 'style.css'));
  fastify.get('/assets/style.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('text/css; charset=utf-8').send(css),
  );
  // The Copy button of a key or secret shown once (script-src 'self': an external file, never inline).
  const copy = await readFile(path.join(VIEWS_DIR, 'assets', 'copy.js'));
  fastify.get('/assets/copy.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('text/javascript; charset=utf-8').send(copy),
  );
}
