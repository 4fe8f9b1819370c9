// A background pass run on demand: woken in process, by PostgreSQL NOTIFY on a channel and by a poll timer (the
// fallback for missed notifications and clock-driven work), never two passes at once, one more if woken during a pass.
// With `leadership`, one replica at a time polls and answers the channel's notifications for all of them: the holder
// of the channel's leader lock on its connection (src/storage/notifications.ts), which LISTENs only once it holds it.
// The others run only the passes woken in process, and every few seconds try to take the lock over and look whether
// the leader asks for help; a replica that cannot connect polls as before.
import type { FastifyBaseLogger } from 'fastify';
import { ThrottledLog } from '../logging/throttled-log.js';
import { ListenConnection, type Listener } from '../storage/index.js';
import { SingleFlight } from './single-flight.js';

/**
 * How often a follower tries to take the lead over and looks whether the leader asks for help: a leader's end leaves
 * its polling work, and the calls the following dispatchers hand it (src/dispatch/dispatcher.ts), undone this long,
 * and a backlog is the leader's alone this long.
 */
export const LEAD_RETRY_MS = 2_000;

export interface WakeableLoopOptions {
  name: string;
  databaseUrl: string;
  /**
   * The process's connection for LISTEN and the leader locks, shared with its other loops (src/plugins' jobs): one
   * connection reads each notification once, and the loops lead in one replica. Without it, one of the loop's own.
   */
  connection?: ListenConnection;
  channel: string;
  pollMs: number;
  log: FastifyBaseLogger;
  pass: () => Promise<void>;
  /**
   * Also called on every poll tick: clock-driven work of the owner's that the woken pass must not wait for (the
   * dispatcher's expiry and recovery sweeps run on the poll, not before every claim).
   */
  onPoll?: () => void;
  /**
   * Called on every notification on the channel this loop answers, before the pass it wakes (the owner learns the wake
   * came from outside, and its payload).
   */
  onNotification?: (payload: string | null) => void;
  /** A follower found the leader asking for help (askForHelp), before the pass it wakes. */
  onHelpWanted?: () => void;
  /**
   * One replica leads: only it polls and answers notifications (each replica doing both multiplied the database's
   * work by the number of replicas, idle or not). `retryMs`: how often a follower tries to take over (LEAD_RETRY_MS);
   * `onChange` hears this loop take or lose the lead.
   */
  leadership?: { retryMs?: number; onChange?: (leading: boolean) => void };
}

export class WakeableLoop {
  private timer: NodeJS.Timeout | null = null;
  private listener: Listener | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private leadTimer: NodeJS.Timeout | null = null;
  private leadingFlag = false;
  private stoppedFlag = false;
  private readonly passes: SingleFlight;
  private readonly connection: ListenConnection;
  /** While the database is down every pass fails (four times a second) and every LISTEN retry too. */
  private readonly logs: ThrottledLog;

  constructor(private readonly options: WakeableLoopOptions) {
    this.logs = new ThrottledLog(options.log);
    this.connection = options.connection ?? new ListenConnection(options.databaseUrl);
    this.passes = new SingleFlight(
      async () => {
        if (this.stoppedFlag) return;
        await options.pass();
        this.logs.recovered('pass', `${options.name} passes succeed again`);
      },
      (error) => this.logs.error('pass', { err: error }, `${options.name} pass failed`),
    );
  }

  get stopped() {
    return this.stoppedFlag;
  }

  /**
   * Whether this loop polls and answers notifications: without leadership always; with it, while it holds the lead,
   * or while it has no LISTEN connection (it cannot tell whether another leads, nor hear anything: it polls).
   */
  get leading() {
    return !this.options.leadership || this.leadingFlag || this.listener === null;
  }

  async start() {
    await this.listen();
    const { leadership } = this.options;
    if (leadership) {
      this.leadTimer = setInterval(() => void this.tryLead(), leadership.retryMs ?? LEAD_RETRY_MS);
      this.leadTimer.unref();
    }
    this.timer = setInterval(() => {
      if (!this.leading) return;
      this.options.onPoll?.();
      this.wake();
    }, this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops waking and waits for the pass under way. Closing the LISTEN connection frees the lead for another replica. */
  async stop() {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.leadTimer) clearInterval(this.leadTimer);
    await this.listener?.close();
    this.setLeading(false);
    await this.passes.settle();
  }

  /**
   * The leader asks the followers to run passes too (true), or stops asking (false); they see it within their lead
   * retry. Never throws: an ask that failed is made again at the next call.
   */
  async askForHelp(wanted: boolean): Promise<void> {
    if (!this.leadingFlag) return;
    await this.listener?.askForHelp(wanted).catch(() => undefined);
  }

  /** Runs a pass now, or right after the current one. */
  wake() {
    if (!this.stoppedFlag) this.passes.request();
  }

  /** Runs passes until none is pending (tests, after moving an injected clock). */
  async settle() {
    this.wake();
    await this.passes.settle();
  }

  private async listen() {
    if (this.stoppedFlag) return;
    let listener: Listener | null = null;
    // pg may both emit 'error' and reject connect() for one failure: one retry, not two (they used to multiply).
    let lost = false;
    const onLost = (error: Error, message: string) => {
      if (lost) return;
      lost = true;
      if (listener && this.listener === listener) this.listener = null;
      // The lock went with the connection: another replica may lead by now.
      this.setLeading(false);
      this.logs.warn('listen', { err: error }, `${this.options.name} ${message}; polling until it is back`);
      void listener?.close();
      this.retryListen();
    };
    try {
      listener = await this.connection.listen(
        this.options.channel,
        {
          notification: (payload) => {
            this.options.onNotification?.(payload);
            this.wake();
          },
          error: (error) => onLost(error, 'lost its LISTEN connection'),
          // Another loop of this process took its lead: this one follows at once rather than at its next retry.
          leadTaken: () => void this.tryLead(),
        },
        { lead: this.options.leadership !== undefined },
      );
    } catch (error) {
      onLost(error as Error, 'could not LISTEN');
      return;
    }
    if (this.stoppedFlag || lost) {
      await listener.close();
      return;
    }
    this.listener = listener;
    this.logs.recovered('listen', `${this.options.name} listens again`);
    await this.tryLead();
  }

  /** Takes the lead if no other replica holds it (a failure is the connection's: its error handler says so). */
  private async tryLead() {
    const listener = this.listener;
    if (!this.options.leadership || this.stoppedFlag || this.leadingFlag || !listener) return;
    const { leading, helpWanted } = await listener.tryLead().catch(() => ({ leading: false, helpWanted: false }));
    if (this.listener !== listener || this.stoppedFlag) return;
    if (leading) this.setLeading(true);
    else if (helpWanted) {
      this.options.onHelpWanted?.();
      this.wake();
    }
  }

  private setLeading(leading: boolean) {
    if (!this.options.leadership || this.leadingFlag === leading) return;
    this.leadingFlag = leading;
    this.options.leadership.onChange?.(leading);
  }

  private retryListen() {
    if (this.stoppedFlag || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.listen();
    }, 1_000);
    this.retryTimer.unref();
  }
}
