// Background work of every process: the call dispatcher (unless DISPATCH_ENABLED=false), the webhook delivery
// worker (unless WEBHOOK_DELIVERY_ENABLED=false) and the retention job (unless RETENTION_ENABLED=false), each stopped
// on close after its in-flight work finishes.
import fp from 'fastify-plugin';
import { CarrierDialers } from '../src/dispatch/carrier-dialers.js';
import type { Dialer } from '../src/dispatch/dialer.js';
import { Dispatcher, type DispatcherOptions } from '../src/dispatch/dispatcher.js';
import { RedisHandOff } from '../src/dispatch/hand-off-relay.js';
import { SimulatedDialer } from '../src/dispatch/simulated-dialer.js';
import { CoalescedNotify } from '../src/jobs/coalesced-notify.js';
import { requestsFirst } from '../src/jobs/requests-first.js';
import { RetentionJob, retentionPolicy, type RetentionJobOptions } from '../src/jobs/retention.js';
import { CALLS_CHANNEL, createRetention, ListenConnection, RETENTION_TABLES } from '../src/storage/index.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../src/webhooks/delivery-worker.js';
import { WebhookSender } from '../src/webhooks/sender.js';
import { subscriberOf } from './redis.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The environment's dialer (DIALER): the calls of accounts without a carrier of their own. */
    dialer: Dialer;
    /**
     * Every call's dialer: its account's carrier's or the environment's; the keys its callbacks are checked with and
     * the dialer its live changes go through (src/dispatch/carrier-dialers.ts).
     */
    dialers: CarrierDialers;
    dispatcher: Dispatcher | null;
    /**
     * After a call of `accountId` is committed: this process's dispatcher claims it at once (for that account, without
     * asking which accounts are due); a process without one (an API-only
     * replica) NOTIFYs the others, one NOTIFY for the calls committed meanwhile. Replicas with their own dispatcher
     * are not told: they find other replicas' calls on their poll or when a call ends.
     */
    wakeDispatchers: (accountId?: string) => void;
    deliveryWorker: DeliveryWorker | null;
    /** Deletes rows past their retention, a pass every RETENTION_INTERVAL_SECONDS; null when RETENTION_ENABLED=false. */
    retention: RetentionJob | null;
  }
}

export interface JobsOptions {
  databaseUrl: string;
  /** Overrides the configured dialer (tests). */
  dialer?: Dialer;
  dispatcher?: Partial<Pick<DispatcherOptions, 'leaseMs' | 'pollMs' | 'beforeDial'>>;
  webhooks?: Partial<
    Pick<DeliveryWorkerOptions, 'pollMs' | 'random' | 'perEndpoint' | 'maxInFlight' | 'onAttempt' | 'stopWaitMs'>
  > & {
    timeoutMs?: number;
  };
  retention?: Partial<Pick<RetentionJobOptions, 'batchSize' | 'pauseMs'>>;
}

export default fp<JobsOptions>(
  async (fastify, options) => {
    const { config } = fastify;
    const dialer = options.dialer ?? (await createDialer(fastify));
    // Background passes give way to requests waiting for a database connection (up to 100 ms at a time).
    const giveWay = requestsFirst(fastify.storage);
    fastify.decorate('dialer', dialer);
    const dialers = new CarrierDialers({
      environment: dialer,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      twilioApiBaseUrl: config.TWILIO_API_BASE_URL,
      telnyxApiBaseUrl: config.TELNYX_API_BASE_URL,
      signalwireApiBaseUrl: config.SIGNALWIRE_API_BASE_URL,
      environmentKeys: {
        twilio: config.TWILIO_AUTH_TOKEN,
        signalwire: config.SIGNALWIRE_SIGNING_KEY,
        telnyx: config.TELNYX_PUBLIC_KEY,
      },
      storage: fastify.backgroundStorage,
    });
    fastify.decorate('dialers', dialers);

    // One connection LISTENs for both loops and holds their leader locks: each NOTIFY costs the leading replica one
    // reading transaction, not one per loop (issue 25.4); closed with the last loop.
    const connection = new ListenConnection(options.databaseUrl);
    const { timeoutMs = config.WEBHOOK_TIMEOUT_MS, onAttempt, ...workerOptions } = options.webhooks ?? {};
    const sender = new WebhookSender({ allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, timeoutMs });
    const deliveryWorker = config.WEBHOOK_DELIVERY_ENABLED
      ? new DeliveryWorker({
          storage: fastify.backgroundStorage,
          databaseUrl: options.databaseUrl,
          connection,
          sender,
          now: fastify.now,
          log: fastify.log.child({ component: 'webhooks' }),
          // A lease outlives its attempt: no second process sends while the first still waits for an answer.
          leaseMs: timeoutMs * 2 + 5_000,
          requestsFirst: giveWay,
          ...workerOptions,
          onAttempt: (outcome, result) => {
            fastify.metrics.webhookAttempts.inc({ outcome });
            fastify.metrics.webhookDuration.observe({ outcome }, result.durationMs / 1000);
            onAttempt?.(outcome, result);
          },
        })
      : null;
    fastify.decorate('deliveryWorker', deliveryWorker);

    // With Redis, followers hand their calls to the leading dispatcher by PUBLISH, not NOTIFY (issue 25.4).
    const { redis } = fastify;
    const relay =
      config.DISPATCH_ENABLED && redis
        ? new RedisHandOff({
            publisher: redis,
            subscriber: () => subscriberOf(redis),
            databaseIdentity: () => fastify.backgroundStorage.notifications.databaseIdentity(),
            log: fastify.log.child({ component: 'dispatcher' }),
          })
        : null;
    const dispatcher = config.DISPATCH_ENABLED
      ? new Dispatcher({
          storage: fastify.backgroundStorage,
          databaseUrl: options.databaseUrl,
          connection,
          dialer,
          dialers,
          now: fastify.now,
          log: fastify.log.child({ component: 'dispatcher' }),
          maxConcurrentCalls: config.MAX_CONCURRENT_CALLS,
          simulated: { ringMs: config.SIMULATED_RING_MS, talkMs: config.SIMULATED_TALK_MS },
          leaseMs: config.DISPATCH_LEASE_MS,
          queuedCallTtlMs: config.QUEUED_CALL_TTL_HOURS * 3600_000,
          requestsFirst: giveWay,
          // startedAt is the claim time: dialling began from the caller's point of view.
          onClaimed: (call) =>
            fastify.metrics.dispatchLatency.observe(
              Math.max(0, (call.startedAt ?? fastify.now()).getTime() - call.createdAt.getTime()) / 1000,
            ),
          onClaimPass: (seconds) => fastify.metrics.dispatchPassDuration.observe(seconds),
          // This process's worker sends a claim's call.started deliveries as soon as the claim commits.
          ...(deliveryWorker ? { webhooks: deliveryWorker } : {}),
          ...(relay ? { relay } : {}),
          ...options.dispatcher,
        })
      : null;
    fastify.decorate('dispatcher', dispatcher);
    const notifier = dispatcher ? null : new CoalescedNotify(fastify.backgroundStorage, CALLS_CHANNEL, fastify.log);
    fastify.decorate('wakeDispatchers', (accountId?: string) =>
      dispatcher ? dispatcher.wake(accountId) : notifier!.notify(),
    );

    // Its own two connections (src/storage/retention.ts says why), opened only while a pass runs.
    const retentionRepository = config.RETENTION_ENABLED ? createRetention(options.databaseUrl) : null;
    const retention = retentionRepository
      ? new RetentionJob({
          retention: retentionRepository,
          now: fastify.now,
          policy: retentionPolicy(config),
          intervalMs: config.RETENTION_INTERVAL_SECONDS * 1000,
          batchSize: config.RETENTION_BATCH_SIZE,
          pauseMs: config.RETENTION_PAUSE_MS,
          budget: { rows: config.RETENTION_PASS_MAX_ROWS, ms: config.RETENTION_PASS_MAX_SECONDS * 1000 },
          log: fastify.log.child({ component: 'retention' }),
          ...options.retention,
          onBatch: (deleted) => {
            for (const [table, rows] of Object.entries(deleted))
              if (rows) fastify.metrics.retentionRowsDeleted.inc({ table }, rows);
          },
          onPass: (outcome) => fastify.metrics.retentionPasses.inc({ outcome }),
        })
      : null;
    // Every table's series from the start, so a rate over it exists before the first deletion.
    if (retention) for (const table of RETENTION_TABLES) fastify.metrics.retentionRowsDeleted.inc({ table }, 0);
    fastify.decorate('retention', retention);

    fastify.addHook('onReady', async () => {
      // The worker first: the dispatcher hands it the deliveries of its first claims.
      await deliveryWorker?.start();
      await dispatcher?.start();
      retention?.start();
    });
    fastify.addHook('onClose', async () => {
      await notifier?.settle();
      await dispatcher?.stop();
      await deliveryWorker?.stop();
      await retention?.stop();
      await retentionRepository?.close();
      sender.close();
    });
  },
  { name: 'jobs', fastify: '5.x', dependencies: ['config', 'db', 'metrics', 'redis'] },
);

async function createDialer(fastify: import('fastify').FastifyInstance): Promise<Dialer> {
  const { config } = fastify;
  if (config.DIALER === 'twilio') {
    const { TwilioDialer } = await import('../src/dispatch/twilio-dialer.js');
    return new TwilioDialer({
      accountSid: config.TWILIO_ACCOUNT_SID!,
      authToken: config.TWILIO_AUTH_TOKEN!,
      apiBaseUrl: config.TWILIO_API_BASE_URL,
      publicBaseUrl: config.PUBLIC_BASE_URL!,
    });
  }
  if (config.DIALER === 'telnyx') {
    const { TelnyxDialer } = await import('../src/dispatch/telnyx-dialer.js');
    return new TelnyxDialer({
      apiKey: config.TELNYX_API_KEY!,
      connectionId: config.TELNYX_CONNECTION_ID!,
      apiBaseUrl: config.TELNYX_API_BASE_URL,
      publicBaseUrl: config.PUBLIC_BASE_URL!,
    });
  }
  if (config.DIALER === 'signalwire') {
    const { SignalWireDialer } = await import('../src/dispatch/signalwire-dialer.js');
    return new SignalWireDialer({
      spaceUrl: config.SIGNALWIRE_SPACE_URL!,
      projectId: config.SIGNALWIRE_PROJECT_ID!,
      token: config.SIGNALWIRE_TOKEN!,
      publicBaseUrl: config.PUBLIC_BASE_URL!,
      ...(config.SIGNALWIRE_API_BASE_URL ? { apiBaseUrl: config.SIGNALWIRE_API_BASE_URL } : {}),
    });
  }
  return new SimulatedDialer(config.SIMULATED_DIAL_LOG);
}
