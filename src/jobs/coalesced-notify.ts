// Tells the dispatchers of other processes that calls are waiting, from a process without a dispatcher of its own
// (or from a following dispatcher, to the leader: which accounts): one NOTIFY for all the calls accepted while the
// previous one was on its way, sent after their commits, outside their transactions. A NOTIFY inside each acceptance
// would serialise the commits (PostgreSQL takes a database-wide lock from commit to the end of a notifying
// transaction: docs/performance.md#no-notify-inside-an-acceptance) and, under load, stalled a request past the pool's
// 1.5 s wait.
import type { FastifyBaseLogger } from 'fastify';
import { ThrottledLog } from '../logging/throttled-log.js';
import type { Storage } from '../storage/index.js';
import { SingleFlight } from './single-flight.js';

export interface CoalescedNotifyOptions {
  /**
   * The NOTIFY carries the items given to notify() since the last one, as payloads made by this (sent in one
   * statement, however many); without it, a NOTIFY without payload.
   */
  payloads?: (items: string[]) => string[];
  /**
   * Tried first with the payloads (src/dispatch/hand-off-relay.ts): only those it resolves unheard are NOTIFYed.
   */
  relay?: { publish(payloads: readonly string[]): Promise<string[]> };
}

export class CoalescedNotify {
  private readonly sends: SingleFlight;
  /** The items asked for since the last send began (with `payloads` only). */
  private pending = new Set<string>();

  constructor(storage: Storage, channel: string, log: FastifyBaseLogger, options: CoalescedNotifyOptions = {}) {
    const { payloads, relay } = options;
    // Every acceptance asks for a NOTIFY: with the database down, one line per interval.
    const logs = new ThrottledLog(log);
    this.sends = new SingleFlight(
      async () => {
        if (!payloads) await storage.notifications.notify(channel);
        else {
          const items = [...this.pending];
          this.pending = new Set();
          if (items.length === 0) return;
          const unheard = relay ? await relay.publish(payloads(items)) : payloads(items);
          if (unheard.length > 0) await storage.notifications.notifyEach(channel, unheard);
        }
        logs.recovered('notify', 'the dispatchers are notified again');
      },
      (error) =>
        logs.warn('notify', { err: error }, 'could not notify the dispatchers; they find the calls on their poll'),
    );
  }

  /**
   * Sends a NOTIFY soon: now if none is on its way, else right after it, with `item` among its payloads. Never throws
   * (the poll is the fallback: items of a NOTIFY that failed are not sent again).
   */
  notify(item?: string) {
    if (item !== undefined) this.pending.add(item);
    this.sends.request();
  }

  /** Resolves once nothing is on its way (tests, shutdown). */
  async settle() {
    await this.sends.settle();
  }
}
