// Recurring failures (a dependency down: every background pass, every reconnect) logged as one line per kind per
// interval with a count of the lines left out, and one line when the failure is over, instead of a flood.
import type { FastifyBaseLogger } from 'fastify';

/** Long enough that an outage reads as a few lines, short enough that an operator sees it is still going on. */
export const THROTTLE_INTERVAL_MS = 10_000;

interface Streak {
  /** When a line of this kind was last written. */
  loggedAt: number;
  /** Occurrences not written since. */
  suppressed: number;
  /** Occurrences since the failure began. */
  total: number;
  since: number;
}

export class ThrottledLog {
  private readonly streaks = new Map<string, Streak>();
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly log: FastifyBaseLogger,
    options: { intervalMs?: number; now?: () => number } = {},
  ) {
    this.intervalMs = options.intervalMs ?? THROTTLE_INTERVAL_MS;
    this.now = options.now ?? Date.now;
  }

  warn(kind: string, fields: Record<string, unknown>, message: string) {
    this.write('warn', kind, fields, message);
  }

  error(kind: string, fields: Record<string, unknown>, message: string) {
    this.write('error', kind, fields, message);
  }

  /** The failure of this kind is over: one line (info) saying so, if any line of it was written. */
  recovered(kind: string, message: string) {
    const streak = this.streaks.get(kind);
    if (!streak) return;
    this.streaks.delete(kind);
    this.log.info({ failures: streak.total, failingForMs: this.now() - streak.since }, message);
  }

  private write(level: 'warn' | 'error', kind: string, fields: Record<string, unknown>, message: string) {
    const now = this.now();
    const streak = this.streaks.get(kind);
    if (!streak) {
      this.streaks.set(kind, { loggedAt: now, suppressed: 0, total: 1, since: now });
      this.log[level](fields, message);
      return;
    }
    streak.total++;
    if (now - streak.loggedAt < this.intervalMs) {
      streak.suppressed++;
      return;
    }
    this.log[level](
      { ...fields, suppressed: streak.suppressed, failures: streak.total, failingForMs: now - streak.since },
      message,
    );
    streak.loggedAt = now;
    streak.suppressed = 0;
  }
}
