// Where the database's time goes while a load runs: pg_stat_activity sampled every SAMPLE_MS, each active backend of
// the database counted under what it is doing (on CPU, or the wait event it waits on), per window of the measurement
// ("before", "pass", "after": the caller names them), with the retention's own statements and autovacuum counted
// apart from the requests'. A backend seen in n samples was busy about n x SAMPLE_MS in that window: a lock wait or
// WAL flush that the triggers' tail spent time in shows up as such samples.
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const SAMPLE_MS = 20;

/** Who a backend works for. */
type Party = 'requests' | 'retention' | 'autovacuum';

export interface WaitWindow {
  /** Samples taken in the window. */
  samples: number;
  /** Per party, how many backend-samples it was active, and of those per state (CPU, or type:event). */
  parties: Record<Party, { active: number; states: Record<string, number> }>;
}

const noWindow = (): WaitWindow => ({
  samples: 0,
  parties: {
    requests: { active: 0, states: {} },
    retention: { active: 0, states: {} },
    autovacuum: { active: 0, states: {} },
  },
});

export class WaitSampler {
  private readonly client: pg.Client;
  private readonly windows = new Map<string, WaitWindow>();
  private label: string | null = null;
  private running = false;
  private loop: Promise<void> | null = null;
  private stopped: Promise<Record<string, WaitWindow>> | null = null;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl, application_name: 'oct-bench-wait-sampler' });
  }

  async start(label: string): Promise<void> {
    await this.client.connect();
    this.label = label;
    this.running = true;
    this.loop = this.sample();
  }

  /** From now on samples count in `label`'s window. */
  mark(label: string): void {
    this.label = label;
  }

  /** Ends the sampling (once; later calls give the same windows). */
  stop(): Promise<Record<string, WaitWindow>> {
    this.stopped ??= (async () => {
      this.running = false;
      await this.loop?.catch(() => undefined);
      await this.client.end();
      return Object.fromEntries(this.windows);
    })();
    return this.stopped;
  }

  private async sample(): Promise<void> {
    while (this.running) {
      const at = performance.now();
      const { rows } = await this.client.query<{ party: Party; state: string }>(
        `SELECT CASE WHEN backend_type = 'autovacuum worker' THEN 'autovacuum'
                     WHEN query LIKE '%DELETE FROM%' AND query LIKE '%FOR UPDATE SKIP LOCKED%' THEN 'retention'
                     ELSE 'requests' END AS party,
                coalesce(wait_event_type || ':' || wait_event, 'CPU') AS state
           FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
      );
      const window = this.windows.get(this.label!) ?? noWindow();
      window.samples++;
      for (const { party, state } of rows) {
        const p = window.parties[party];
        p.active++;
        p.states[state] = (p.states[state] ?? 0) + 1;
      }
      this.windows.set(this.label!, window);
      const wait = SAMPLE_MS - (performance.now() - at);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** "CPU 40%, Lock:transactionid 12%, ..." for one party of a window: the share of its active samples, largest first. */
export function describeStates(window: WaitWindow, party: Party, top = 4): string {
  const { active, states } = window.parties[party];
  if (active === 0) return 'idle';
  const perSample = (active / window.samples).toFixed(2);
  const shares = Object.entries(states)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([state, n]) => `${state} ${Math.round((100 * n) / active)}%`)
    .join(', ');
  return `${perSample} active (${shares})`;
}

export const WAIT_SAMPLE_MS = SAMPLE_MS;
