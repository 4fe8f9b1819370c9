// The dashboard's one stylesheet, its scripts and its icon, from src/views/assets/ and the htmx.org package (read
// once; no build step). Cacheable for a day. Every script is an external file (script-src 'self'), never inline.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { VIEWS_DIR } from '../../paths.js';

const DAY = 'public, max-age=86400';
const JS = 'text/javascript; charset=utf-8';

export default async function assets(fastify: FastifyInstance) {
  const serve = (url: string, body: Buffer, type: string) =>
    fastify.get(url, { config: { role: 'public' }, schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', DAY).type(type).send(body),
    );
  const own = (file: string) => readFile(path.join(VIEWS_DIR, 'assets', file));
  serve('/assets/style.css', await own('style.css'), 'text/css; charset=utf-8');
  // The Copy button of a key or secret shown once.
  serve('/assets/copy.js', await own('copy.js'), JS);
  // Live refresh of the Overview and the Calls pages while calls are active: htmx (self-hosted, the version
  // package.json pins; its meta config in layout.eta keeps it from eval and inline styles), and our live.js.
  const htmx = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');
  serve('/assets/htmx.min.js', await readFile(htmx), JS);
  serve('/assets/live.js', await own('live.js'), JS);
  // A new agent's time zone, and a user's own on the Account page while they have none: the browser's.
  serve('/assets/zone-default.js', await own('zone-default.js'), JS);
  // The agent form: the settings that cannot apply (one attempt, no window, ...) disabled while they cannot.
  serve('/assets/agent-form.js', await own('agent-form.js'), JS);
  // The icon of every page (<link rel="icon"> in layout.eta); /favicon.ico redirects here (root-redirect.ts).
  serve('/assets/favicon.svg', await own('favicon.svg'), 'image/svg+xml');
}
