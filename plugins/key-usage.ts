// When each API key was last used, for the dashboard: after the response of a request the key authenticated (so never
// on the request's own time), at most once a minute per key in this process, in one statement for the keys used
// meanwhile, on the background pool. A failed write is logged (throttled) and the next use tries again.
import fp from 'fastify-plugin';
import { ThrottledLog } from '../src/logging/throttled-log.js';
import { sqlPool } from '../src/storage/database.js';
import { touchApiKeys } from '../src/storage/keys.js';

/** How stale "last used" may be. */
export const KEY_USAGE_RESOLUTION_MS = 60_000;

export default fp(
  async (fastify) => {
    const pool = sqlPool(fastify.backgroundPrisma);
    const logs = new ThrottledLog(fastify.log);
    /** When this process last recorded each key. */
    const recorded = new Map<string, number>();
    let pending = new Map<string, Date>();
    let flushing: Promise<void> | null = null;

    const flush = async () => {
      const uses = [...pending].map(([keyId, at]) => ({ keyId, at }));
      pending = new Map();
      try {
        await touchApiKeys(pool, uses);
        logs.recovered('key-usage', 'API key use is recorded again');
      } catch (error) {
        for (const { keyId } of uses) recorded.delete(keyId);
        logs.warn('key-usage', { err: error }, 'could not record when API keys were last used');
      }
    };

    fastify.addHook('onResponse', async (request) => {
      const keyId = request.principal?.keyId;
      if (!keyId) return;
      const now = fastify.now();
      const last = recorded.get(keyId);
      if (last !== undefined && now.getTime() - last < KEY_USAGE_RESOLUTION_MS) return;
      recorded.set(keyId, now.getTime());
      // Bounded: entries older than the resolution would be written again anyway.
      if (recorded.size > 100_000) for (const [id, at] of recorded) if (now.getTime() - at >= KEY_USAGE_RESOLUTION_MS) recorded.delete(id);
      pending.set(keyId, now);
      flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush).finally(() => { flushing = null; });
    });

    fastify.addHook('onClose', async () => {
      await flushing;
    });
  },
  { name: 'key-usage', fastify: '5.x', dependencies: ['db', 'bearer-auth'] },
);
