// State changes only by POST from our own pages: an unsafe method needs an Origin (or, lacking it, a Referer) of
// this site, and the form's CSRF token bound to the secret in the CSRF cookie (@fastify/csrf-protection).
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/sensible';
import type {} from '@fastify/csrf-protection';
import type {} from '@fastify/multipart';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(value: string | undefined): string | null {
  if (!value || value === 'null' || !URL.canParse(value)) return null;
  return new URL(value).origin;
}

/** Where our pages are served from: the Host the request came to (over https), and PUBLIC_BASE_URL. */
function ownOrigins(request: FastifyRequest, publicBaseUrl: string | undefined): string[] {
  const origins = [`https://${request.host}`];
  const configured = originOf(publicBaseUrl);
  if (configured) origins.push(configured);
  return origins;
}

export default fp(
  async (fastify) => {
    fastify.addHook('onRequest', async (request) => {
      if (SAFE_METHODS.has(request.method)) return;
      const origin = originOf(request.headers.origin) ?? originOf(request.headers.referer);
      if (!origin || !ownOrigins(request, fastify.config.PUBLIC_BASE_URL).includes(origin)) {
        throw fastify.httpErrors.forbidden('This form was sent from another site.');
      }
    });
    // After the body is parsed (the token is a form field), before validation and the handler.
    fastify.addHook('preValidation', (request, reply, done) => {
      if (SAFE_METHODS.has(request.method)) return done();
      // A multipart body is unread here: the one route that takes one checks the token of its first part itself, and
      // the dashboard plugin (./index.ts) refused it everywhere else already.
      if (request.isMultipart()) return done();
      fastify.csrfProtection(request, reply, done);
    });
  },
  { name: 'dashboard-request-checks', fastify: '5.x', dependencies: ['@fastify/csrf-protection', '@fastify/sensible'] },
);
