// Who waits for whom while a migration runs: pg_stat_activity with pg_blocking_pids sampled every SAMPLE_MS, each
// blocked backend counted under "waiter <- its blockers" (a client backend by the start of its statement, any other by
// its type: an autovacuum worker shows as such). A chain seen in n samples lasted about n x SAMPLE_MS in all. (g)
// logs the most sampled chains of each step: whether its lock waited for autovacuum, for a transaction in flight, or
// for nobody, and what waited for it.
import pg from 'pg';

const SAMPLE_MS = 20;

interface Backend {
  pid: number;
  backend_type: string;
  state: string | null;
  query: string;
  blockers: number[];
}

const describe = (b: Backend | undefined) =>
  b === undefined
    ? 'a backend gone since'
    : b.backend_type === 'client backend'
      ? `"${b.query}"${b.state === 'active' ? '' : ` (${b.state})`}`
      : b.backend_type;

/** A window's samples and its most sampled chains, "waiter <- blockers" with their counts. */
export interface LockWaits {
  samples: number;
  chains: [string, number][];
}

/** The chains as the log and the report print them: "waiter <- blockers xN; ...", or "none". */
export function chainsText({ chains }: LockWaits): string {
  return chains.map(([chain, n]) => `${chain} x${n}`).join('; ') || 'none';
}

export class LockSampler {
  private readonly client: pg.Client;
  private chains = new Map<string, number>();
  private samples = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl, application_name: 'oct-bench-lock-sampler' });
  }

  async start(): Promise<void> {
    await this.client.connect();
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.sample();
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      }
    })();
  }

  /** The `top` chains sampled since the last call (most sampled first) and how many samples that was; starts anew. */
  take(top: number): LockWaits {
    const taken = { samples: this.samples, chains: [...this.chains].sort((a, b) => b[1] - a[1]).slice(0, top) };
    this.chains = new Map();
    this.samples = 0;
    return taken;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client.end();
  }

  private async sample() {
    const { rows } = await this.client.query<Backend>(
      `SELECT pid, backend_type, state, left(regexp_replace(query, '\\s+', ' ', 'g'), 48) AS query,
              pg_blocking_pids(pid) AS blockers
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    const byPid = new Map(rows.map((r) => [r.pid, r]));
    this.samples++;
    for (const waiter of rows) {
      if (waiter.blockers.length === 0) continue;
      const chain = `${describe(waiter)} <- ${[...new Set(waiter.blockers.map((pid) => describe(byPid.get(pid))))].join(' + ')}`;
      this.chains.set(chain, (this.chains.get(chain) ?? 0) + 1);
    }
  }
}
