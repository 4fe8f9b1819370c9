// Concurrency counters: the per-account limits (active calls, waiting calls, how long a call may wait) and each
// account's live counts, for acceptance (the queue bound), the dispatcher (the active limit), metrics and the
// dashboard. The counts are kept by the database (the waiting counter's triggers; active calls bounded by the limit),
// so reading them never counts history.
import fp from 'fastify-plugin';
import type { LIVE_STATUSES } from '../schemas/vocabulary.js';
import type { LiveCallCounts } from '../src/storage/index.js';

export interface ConcurrencyLimits {
  /** Calls of one account dialling or connected at once. */
  maxActive: number;
  /** Calls of one account accepted and waiting; beyond it a trigger is 429. */
  maxWaiting: number;
  /** How long a call may wait after it could first be dialled before it fails as expired. */
  queuedCallTtlHours: number;
}

export interface Concurrency {
  limits: ConcurrencyLimits;
  /** Live counts per account given; one with no call active or waiting (or that does not exist) is absent: zeros. */
  counts(accountIds: string[]): Promise<Map<string, LiveCallCounts>>;
  /** Calls in each live status across all accounts (metrics). */
  totals(): Promise<Record<(typeof LIVE_STATUSES)[number], number>>;
}

declare module 'fastify' {
  interface FastifyInstance {
    concurrency: Concurrency;
  }
}

export default fp(
  async (fastify) => {
    const { config } = fastify;
    const limits: ConcurrencyLimits = {
      maxActive: config.MAX_CONCURRENT_CALLS,
      maxWaiting: config.MAX_QUEUED_CALLS,
      queuedCallTtlHours: config.QUEUED_CALL_TTL_HOURS,
    };
    fastify.decorate('concurrency', {
      limits,
      counts: (accountIds: string[]) => fastify.storage.calls.liveCallCounts(accountIds, fastify.now()),
      totals: () => fastify.storage.calls.liveCallTotals(),
    } satisfies Concurrency);
  },
  { name: 'concurrency', fastify: '5.x', dependencies: ['config', 'db'] },
);
