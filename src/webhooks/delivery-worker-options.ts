// What a DeliveryWorker is given: its storage, sender, clock, limits and lease, and the hooks that observe it.
import type { FastifyBaseLogger } from 'fastify';
import type { ListenConnection, Storage } from '../storage/index.js';
import type { AttemptResult, WebhookSender } from './sender.js';

export interface DeliveryWorkerOptions {
  /** The background pool's storage (fastify.backgroundStorage): this work waits for connections, requests do not. */
  storage: Storage;
  databaseUrl: string;
  /** The process's LISTEN connection, shared with its other loops (src/jobs/wakeable-loop.ts); else one of its own. */
  connection?: ListenConnection;
  /** Awaited before a claim: background work gives way to waiting requests (src/jobs/requests-first.ts). */
  requestsFirst?: () => Promise<void>;
  sender: WebhookSender;
  now: () => Date;
  log: FastifyBaseLogger;
  pollMs?: number;
  /** How often a follower tries to take the lead (default LEAD_RETRY_MS of src/jobs/wakeable-loop.ts). */
  leadRetryMs?: number;
  /** In-flight attempts per endpoint in this process. */
  perEndpoint?: number;
  /** In-flight attempts in this process, not counting those stalled (unanswered after STALLED_AFTER_MS). */
  maxInFlight?: number;
  /** Stalled attempts this process may wait on besides: beyond them, they hold places of maxInFlight again. */
  maxStalled?: number;
  random?: () => number;
  /** How long a claimed delivery is reserved for this worker; must exceed the send timeout. */
  leaseMs: number;
  /** Observes each attempt (metrics). */
  onAttempt?: (outcome: string, result: AttemptResult) => void;
  /** How long stop() waits for attempts unanswered (default STOP_WAIT_MS). */
  stopWaitMs?: number;
}
