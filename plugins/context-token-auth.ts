// The agent runtime's authentication: an `Authorization: Bearer <context token>` (plugins/context-tokens.ts) for the
// call the path names becomes `request.runtimeClaims`. Checked with the key alone, no database: whether the token's
// attempt still speaks for the call is its route's to check. Without claims the request is refused by the
// failed-authentication throttle's answer (401 Invalid context token, or 429 beyond its limit).
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { ContextClaims } from '../src/domain/context-token.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified context token: its call (the one the path names) and attempt. */
    runtimeClaims: ContextClaims | null;
  }
}

export default fp(
  async (fastify) => {
    /** The token's claims, when it is this service's and for the call the path names. */
    async function claimsOf(request: FastifyRequest): Promise<ContextClaims | null> {
      const header = request.headers.authorization;
      const match = typeof header === 'string' ? /^Bearer ([A-Za-z0-9._-]{1,200})$/.exec(header) : null;
      if (!match) return null;
      const claims = await fastify.contextTokens.verify(match[1]!);
      const callId = (request.params as { call_id?: unknown } | undefined)?.call_id;
      return claims && claims.callId === callId ? claims : null;
    }

    fastify.decorateRequest('runtimeClaims', null);
    fastify.addHook('onRequest', async (request) => {
      const claims = await claimsOf(request);
      if (!claims) throw await fastify.failedAuth.refusal(request.ip);
      request.runtimeClaims = claims;
    });
  },
  { name: 'context-token-auth', fastify: '5.x', dependencies: ['errors', 'context-tokens', 'failed-auth-throttle'] },
);
