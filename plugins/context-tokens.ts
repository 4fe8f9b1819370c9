// The runtime's context tokens (src/domain/context-token.ts) with the service's key: made on first start and kept in
// the database (signing_keys), so that every replica signs and verifies with the same one. Read when first needed: the
// service starts (and reports itself not ready) while the database is away.
import { randomBytes } from 'node:crypto';
import fp from 'fastify-plugin';
import { signContextToken, verifyContextToken, type ContextClaims } from '../src/domain/context-token.js';

export interface ContextTokens {
  /** A token for the call's attempt, issued now. */
  sign(callId: string, attempt: number): Promise<string>;
  /** The token's claims when this service signed it and it is not too old; null otherwise. */
  verify(token: string): Promise<ContextClaims | null>;
}

declare module 'fastify' {
  interface FastifyInstance {
    contextTokens: ContextTokens;
  }
}

export const CONTEXT_TOKEN_KEY_PURPOSE = 'context_token_v1';

export default fp(
  async (fastify) => {
    let key: Promise<Buffer> | null = null;
    const keyOf = () => {
      key ??= fastify.storage.signingKeys
        .ensureKey(CONTEXT_TOKEN_KEY_PURPOSE, randomBytes(32).toString('base64'), fastify.now())
        .then((stored) => Buffer.from(stored, 'base64'));
      // A failed read (the database away) is tried again by the next caller.
      key.catch(() => (key = null));
      return key;
    };
    fastify.decorate('contextTokens', {
      sign: async (callId, attempt) => signContextToken(await keyOf(), { callId, attempt, now: fastify.now() }),
      verify: async (token) => verifyContextToken(await keyOf(), token, fastify.now()),
    } satisfies ContextTokens);
  },
  { name: 'context-tokens', fastify: '5.x', dependencies: ['config', 'db', 'secrets'] },
);
