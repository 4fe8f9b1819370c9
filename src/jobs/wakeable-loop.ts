// A background pass run on demand: woken by PostgreSQL NOTIFY on a channel and by a poll timer (the fallback for
// missed notifications and clock-driven work), never two passes at once, one more if woken during a pass.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { SingleFlight } from './single-flight.js';

export interface WakeableLoopOptions {
  name: string;
  databaseUrl: string;
  channel: string;
  pollMs: number;
  log: FastifyBaseLogger;
  pass: () => Promise<void>;
}

export class WakeableLoop {
  private timer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private stoppedFlag = false;
  private readonly passes: SingleFlight;

  constructor(private readonly options: WakeableLoopOptions) {
    this.passes = new SingleFlight(
      async () => {
        if (!this.stoppedFlag) await options.pass();
      },
      (error) => options.log.error({ err: error }, `${options.name} pass failed`),
    );
  }

  get stopped() {
    return this.stoppedFlag;
  }

  async start() {
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops waking and waits for the pass under way. */
  async stop() {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
    await this.listener?.end().catch(() => undefined);
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
    const retry = () => {
      if (!this.stoppedFlag) setTimeout(() => void this.listen().catch(() => undefined), 1_000).unref();
    };
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      this.options.log.warn({ err: error }, `${this.options.name} lost its LISTEN connection; polling until it is back`);
      this.listener = null;
      retry();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      this.listener = client;
    } catch (error) {
      this.options.log.warn({ err: error }, `${this.options.name} could not LISTEN; polling only`);
      await client.end().catch(() => undefined);
      retry();
    }
  }
}
