// Bearer authentication: an `Authorization: Bearer svc_sk_...` key becomes `request.principal`, looked up by its
// SHA-256 digest in one indexed query on every request that may authenticate (a working key is never cached, so
// rotation, revocation and the access switch hold at once on every replica). Without a principal the request is
// refused by the failed-authentication throttle's answer (401, or 429 beyond its limit).
import fp from 'fastify-plugin';
import { apiKeyDigest, isWellFormedApiKey, parseBearerToken } from '../src/domain/api-key.js';
import { InvalidDigests } from '../src/domain/invalid-digests.js';
import type { Principal } from '../src/domain/principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export default fp(
  async (fastify) => {
    const keys = fastify.storage.keys;
    const invalid = new InvalidDigests();
    const lookUp = async (token: string): Promise<Principal | null> => {
      const digest = apiKeyDigest(token);
      if (invalid.has(digest)) return null;
      const principal = await keys.findPrincipalByKeyDigest(digest);
      if (!principal) invalid.add(digest);
      return principal;
    };

    fastify.decorateRequest('principal', null);

    fastify.addHook('onRequest', async (request) => {
      const token = parseBearerToken(request.headers.authorization);
      // A malformed key or a failed checksum is refused without touching the database, as is a remembered digest.
      const principal = token && isWellFormedApiKey(token) ? await lookUp(token) : null;
      // Counted only on failure, so a valid key never waits on the throttle (nor on Redis for it).
      if (!principal) throw await fastify.failedAuth.refusal(request.ip);
      request.principal = principal;
    });
  },
  { name: 'bearer-auth', fastify: '5.x', dependencies: ['errors', 'db', 'failed-auth-throttle'] },
);
