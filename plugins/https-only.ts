// HTTPS only: with TLS on the listener, plain HTTP never gets here (the listener answers it: src/tls-listener.ts);
// behind a proxy, X-Forwarded-Proto must say https.
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';

export interface HttpsOnlyOptions {
  /** True when a TLS-terminating proxy sits in front and the listener itself is plain HTTP. */
  behindProxy: boolean;
}

export default fp<HttpsOnlyOptions>(
  async (fastify, { behindProxy }) => {
    if (!behindProxy) return;
    fastify.addHook('onRequest', async (request) => {
      const forwarded = request.headers['x-forwarded-proto'];
      // A chain of proxies appends: the first value is what the client spoke.
      const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
      if (proto !== 'https') throw new AppError('HTTPS_REQUIRED');
    });
  },
  { name: 'https-only', fastify: '5.x', dependencies: ['errors'] },
);
