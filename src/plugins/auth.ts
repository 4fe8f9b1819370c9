// Authentication: Bearer svc_sk_ keys only, looked up by SHA-256 digest in one indexed query on every request (no
// cache, so rotation and revocation hold at once on every replica); keys in the URL refused; beyond
// AUTH_FAILURES_PER_MINUTE failures from one client IP, further failures are answered 429 instead of 401.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { apiKeyDigest, isWellFormedApiKey, parseBearerToken } from '../domain/api-key.js';
import { AppError } from '../errors.js';
import { MemoryFailureCounter, RedisFailureCounter, type FailureCounter } from '../rate-limit/failure-counter.js';

export interface Principal {
  keyId: string;
  accountId: string;
  accountKind: 'agency' | 'client';
  /** The agency at the top: the account itself for agencies. */
  agencyId: string;
  /** The agency's plan (clients inherit it). */
  plan: string;
  /** The account's switch and, for a client, its agency's switch too. */
  apiAccessEnabled: boolean;
  defaultAgentId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const KEY_QUERY_PARAMETERS = ['api_key', 'apikey', 'key', 'token', 'access_token'];
const FAILURE_WINDOW_MS = 60_000;

interface PrincipalRow {
  key_id: string;
  account_id: string;
  kind: 'agency' | 'client';
  agency_id: string;
  plan: string;
  api_access_enabled: boolean;
  default_agent_id: string | null;
}

function keyInUrl(request: FastifyRequest): boolean {
  const query = request.url.indexOf('?');
  if (query === -1) return false;
  const params = new URLSearchParams(request.url.slice(query + 1));
  for (const [name, value] of params) {
    if (KEY_QUERY_PARAMETERS.includes(name.toLowerCase()) || value.includes('svc_sk_')) return true;
  }
  return false;
}

export interface AuthOptions {
  /** Failed attempts per client IP per minute before 429. */
  failuresPerMinute: number;
}

export default fp<AuthOptions>(
  async (fastify, { failuresPerMinute }) => {
    const failures: FailureCounter = fastify.redis
      ? new RedisFailureCounter(fastify.redis, FAILURE_WINDOW_MS)
      : new MemoryFailureCounter(FAILURE_WINDOW_MS);
    // The failure limiter must not turn a Redis outage into refusals: on a store error, carry on unlimited.
    const safely = async <T>(work: Promise<T>, fallback: T): Promise<T> =>
      work.catch((error: Error) => {
        fastify.log.warn({ err: error }, 'auth failure counter unavailable');
        return fallback;
      });

    fastify.decorateRequest('principal', null);

    fastify.addHook('onRequest', async (request) => {
      if (keyInUrl(request)) throw new AppError('KEY_IN_URL');

      const token = parseBearerToken(request.headers.authorization);
      // A malformed key or a failed checksum is refused without touching the database.
      const rows = token && isWellFormedApiKey(token)
        ? await fastify.prisma.$queryRaw<PrincipalRow[]>`
            SELECT k.id AS key_id, a.id AS account_id, a.kind, COALESCE(a.agency_id, a.id) AS agency_id,
                   COALESCE(a.plan, g.plan)::text AS plan,
                   (a.api_access_enabled AND COALESCE(g.api_access_enabled, true)) AS api_access_enabled,
                   a.default_agent_id
              FROM api_keys k
              JOIN accounts a ON a.id = k.account_id
              LEFT JOIN accounts g ON g.id = a.agency_id
             WHERE k.digest = ${apiKeyDigest(token)} AND k.revoked_at IS NULL`
        : [];
      const row = rows[0];
      if (!row) {
        // Counted only on failure, so a valid key never waits on the counter (nor on Redis for it).
        const seen = await safely(failures.hit(request.ip), { count: 0, resetInMs: 0 });
        if (seen.count > failuresPerMinute) {
          const seconds = Math.max(1, Math.ceil(seen.resetInMs / 1000));
          throw new AppError('TOO_MANY_FAILED_AUTH', { seconds }, { 'retry-after': String(seconds) });
        }
        throw new AppError('INVALID_API_KEY');
      }
      request.principal = {
        keyId: row.key_id,
        accountId: row.account_id,
        accountKind: row.kind,
        agencyId: row.agency_id,
        plan: row.plan,
        apiAccessEnabled: row.api_access_enabled,
        defaultAgentId: row.default_agent_id,
      };
    });
  },
  { name: 'auth', fastify: '5.x', dependencies: ['errors', 'db', 'redis'] },
);
