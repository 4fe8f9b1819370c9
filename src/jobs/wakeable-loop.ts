// A background pass run on demand: woken in process, by PostgreSQL NOTIFY on a channel and by a poll timer (the
// fallback for missed notifications and clock-driven work), never two passes at once, one more if woken during a pass.
import type { FastifyBaseLogger } from 'fastify';
import { ThrottledLog } from '../logging/throttled-log.js';
import { listen, type Listener } from '../storage/index.js';
import { SingleFlight } from './single-flight.js';

export interface WakeableLoopOptions {
  name: string;
  databaseUrl: string;
  channel: string;
  pollMs: number;
  log: FastifyBaseLogger;
  pass: () => Promise<void>;
  /**
   * Also called on every poll tick: clock-driven work of the owner's that the woken pass must not wait for (the
   * dispatcher's expiry and recovery sweeps run on the poll, not before every claim).
   */
  onPoll?: () => void;
  /** Called on every notification on the channel, before the pass it wakes (the owner learns the wake came from outside). */
  onNotification?: () => void;
}

export class WakeableLoop {
  private timer: NodeJS.Timeout | null = null;
  private listener: Listener | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stoppedFlag = false;
  private readonly passes: SingleFlight;
  /** While the database is down every pass fails (four times a second) and every LISTEN retry too. */
  private readonly logs: ThrottledLog;

  constructor(private readonly options: WakeableLoopOptions) {
    this.logs = new ThrottledLog(options.log);
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

  async start() {
    await this.listen();
    this.timer = setInterval(() => {
      this.options.onPoll?.();
      this.wake();
    }, this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops waking and waits for the pass under way. */
  async stop() {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.listener?.close();
    await this.passes.settle();
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
      this.logs.warn('listen', { err: error }, `${this.options.name} ${message}; polling until it is back`);
      void listener?.close();
      this.retryListen();
    };
    try {
      listener = await listen(this.options.databaseUrl, this.options.channel, {
        notification: () => {
          this.options.onNotification?.();
          this.wake();
        },
        error: (error) => onLost(error, 'lost its LISTEN connection'),
      });
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
