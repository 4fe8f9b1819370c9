// What a Dispatcher is given: its storage, dialer, clock and limits, the hooks that observe it, and whom it hands work.
import type { FastifyBaseLogger } from 'fastify';
import type { CallRow as Call, ClaimedDelivery, ListenConnection, Storage } from '../storage/index.js';
import type { CarrierDialers } from './carrier-dialers.js';
import type { Dialer } from './dialer.js';
import type { HandOffRelay } from './hand-off-relay.js';
import type { SimulatedTiming } from './simulated-dialer.js';

export interface DispatcherOptions {
  /** The background pool's storage (fastify.backgroundStorage): this work waits for connections, requests do not. */
  storage: Storage;
  databaseUrl: string;
  /** The process's LISTEN connection, shared with its other loops (src/jobs/wakeable-loop.ts); else one of its own. */
  connection?: ListenConnection;
  /** Awaited between the statements of a pass: background work gives way to waiting requests (src/jobs/requests-first.ts). */
  requestsFirst?: () => Promise<void>;
  /** The environment's dialer (DIALER): the calls of accounts without a carrier of their own. */
  dialer: Dialer;
  /**
   * Every call's dialer: its account carrier's or the environment's (`dialer`, which it must hold). Absent: calls of
   * accounts with a carrier of their own fail (provider_error), as without PUBLIC_BASE_URL.
   */
  dialers?: CarrierDialers;
  now: () => Date;
  log: FastifyBaseLogger;
  maxConcurrentCalls: number;
  simulated?: SimulatedTiming;
  /** How long a claim protects a call between claim and dial. */
  leaseMs?: number;
  /** A retried call's time to live from its next attempt (QUEUED_CALL_TTL_HOURS); the simulated calls' attempts end here. */
  queuedCallTtlMs?: number;
  /** Poll interval: the fallback for missed notifications, window openings and expiries. */
  pollMs?: number;
  /** How often a follower tries to take the lead (default LEAD_RETRY_MS of src/jobs/wakeable-loop.ts). */
  leadRetryMs?: number;
  /** Test hook: runs after a claim commits and before the dial (a crash there must not lose the call). */
  beforeDial?: (call: Call) => Promise<void> | void;
  /** Observes each call this dispatcher claimed, after the claim commits (metrics: dispatch latency). */
  onClaimed?: (call: Call) => void;
  /** Observes the seconds of each claim pass that had accounts to claim for, from its start to after its commit (metrics). */
  onClaimPass?: (seconds: number) => void;
  /**
   * This process's webhook worker, if it has one: the call.started deliveries a claim writes are leased to it in the
   * claim's transaction and handed over after the commit, so a call's first webhook goes out without waiting for the
   * worker to be woken and to claim it.
   */
  webhooks?: WebhookHandOff;
  /**
   * Redis pub/sub for the hand-offs (src/dispatch/hand-off-relay.ts): a follower publishes, the leader subscribes;
   * a hand-off nobody heard goes by NOTIFY. Without it, every hand-off is a NOTIFY.
   */
  relay?: HandOffRelay;
}

export interface WebhookHandOff {
  /** How long a delivery handed over stays leased to the worker. */
  readonly leaseMs: number;
  /** Sends deliveries leased to it (or gives them back); called after the transaction that leased them commits. */
  take(deliveries: ClaimedDelivery[]): void;
}
