// The service's environment for accepted-trigger runs, as `npm run bench` (bench/run.ts ACCEPTING_ENV) sets it, for
// the benches that start their own services (bench/scale/) without running bench/run.ts's main.

/** Everything on as deployed; the limiter runs (through Redis) but never refuses, queues never fill, calls last 0.5 s. */
export function acceptingEnv(redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'info',
    DIALER: 'simulated',
    DISPATCH_ENABLED: 'true',
    WEBHOOK_DELIVERY_ENABLED: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    MAX_QUEUED_CALLS: '1000000',
    SIMULATED_RING_MS: '0',
    SIMULATED_TALK_MS: '500',
    ...extra,
  };
}
