// Tells the dispatchers of other processes that calls are waiting, from a process without a dispatcher of its own:
// one NOTIFY for all the calls accepted while the previous one was on its way, sent after their commits, outside
// their transactions. A NOTIFY inside each acceptance would serialise the commits (PostgreSQL takes a database-wide
// lock from commit to the end of a notifying transaction: bench/README.md, "Figures behind code comments") and, under
// load, stalled a request past the pool's 1.5 s wait.
import type { FastifyBaseLogger } from 'fastify';
import { ThrottledLog } from '../logging/throttled-log.js';
import type { Storage } from '../storage/index.js';
import { SingleFlight } from './single-flight.js';

export class CoalescedNotify {
  private readonly sends: SingleFlight;

  constructor(storage: Storage, channel: string, log: FastifyBaseLogger) {
    // Every acceptance asks for a NOTIFY: with the database down, one line per interval.
    const logs = new ThrottledLog(log);
    this.sends = new SingleFlight(
      async () => {
        await storage.notifications.notify(channel);
        logs.recovered('notify', 'the dispatchers are notified again');
      },
      (error) =>
        logs.warn('notify', { err: error }, 'could not notify the dispatchers; they find the calls on their poll'),
    );
  }

  /** Sends a NOTIFY soon: now if none is on its way, else right after it. Never throws (the poll is the fallback). */
  notify() {
    this.sends.request();
  }

  /** Resolves once nothing is on its way (tests, shutdown). */
  async settle() {
    await this.sends.settle();
  }
}
