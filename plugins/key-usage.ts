// When each API key was last used, for the dashboard: after the response of a request the key authenticated and its
// account was allowed to make (so never on the request's own time), at most once a minute per key in this process, in
// one statement for the keys used meanwhile, on the background pool. A failed write is logged (throttled) and the next
// use tries again.
import fp from 'fastify-plugin';
import type { Principal } from '../src/domain/principal.js';
import { planAllowsApi } from '../src/domain/api-access.js';
import { ThrottledLog } from '../src/logging/throttled-log.js';

/** How stale "last used" may be. */
export const KEY_USAGE_RESOLUTION_MS = 60_000;

/**
 * A use is a request the access plugin let through. Refused by the switch or the plan (403): not a use, or "last used"
 * would say a switched-off key still works. Refused by the rate limit (429), the body or the agent (400, 403 for
 * another tenant's agent): a use, since the key was good and its account allowed to call.
 */
export function countsAsUse(principal: Pick<Principal, 'apiAccessEnabled' | 'plan'>): boolean {
  return principal.apiAccessEnabled && planAllowsApi(principal.plan);
}

export default fp(
  async (fastify) => {
    const keys = fastify.backgroundStorage.keys;
    const logs = new ThrottledLog(fastify.log);
    /** When this process last recorded each key. */
    const recorded = new Map<string, number>();
    let pending = new Map<string, Date>();
    let flushing: Promise<void> | null = null;

    const flush = async () => {
      const uses = [...pending].map(([keyId, at]) => ({ keyId, at }));
      pending = new Map();
      try {
        await keys.touchApiKeys(uses);
        logs.recovered('key-usage', 'API key use is recorded again');
      } catch (error) {
        for (const { keyId } of uses) recorded.delete(keyId);
        logs.warn('key-usage', { err: error }, 'could not record when API keys were last used');
      }
    };

    fastify.addHook('onResponse', async (request) => {
      const principal = request.principal;
      if (!principal?.keyId || !countsAsUse(principal)) return;
      const keyId = principal.keyId;
      const now = fastify.now();
      const last = recorded.get(keyId);
      if (last !== undefined && now.getTime() - last < KEY_USAGE_RESOLUTION_MS) return;
      recorded.set(keyId, now.getTime());
      // Bounded: entries older than the resolution would be written again anyway.
      if (recorded.size > 100_000)
        for (const [id, at] of recorded) if (now.getTime() - at >= KEY_USAGE_RESOLUTION_MS) recorded.delete(id);
      pending.set(keyId, now);
      flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush).finally(() => {
        flushing = null;
      });
    });

    fastify.addHook('onClose', async () => {
      await flushing;
    });
  },
  { name: 'key-usage', fastify: '5.x', dependencies: ['db', 'bearer-auth'] },
);
