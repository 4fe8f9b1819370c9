// The benches' wait for autovacuum after a bulk load (bench/dashboard-calls.ts, bench/scale/): instead of issuing
// VACUUM or ANALYZE, which no deployment does by hand, wait until the server's own autovacuum has caught up by its own
// thresholds, as it has in a deployment whose rows came over months.
import { performance } from 'node:perf_hooks';
import type pg from 'pg';

export interface AutovacuumWait {
  caughtUp: boolean;
  seconds: number;
  /** Tables still over a threshold when the wait gave up (empty when caught up). */
  lagging: string[];
  /** What it waited for and how long, in words (for the results). */
  text: string;
}

/**
 * Waits until autovacuum has caught up with each of `tables` (every table of the schema when omitted): no more changes
 * since its last analyze, inserts since its last vacuum, nor dead rows, than would make it come back (the server's
 * own autovacuum_* thresholds and scale factors), at most `maxMs`. Polls every `pollMs`.
 */
export async function awaitAutovacuum(
  db: pg.ClientBase,
  options: { tables?: string[]; maxMs: number; pollMs?: number; log?: (line: string) => void },
): Promise<AutovacuumWait> {
  const started = performance.now();
  const named = options.tables ? options.tables.join(', ') : 'every table';
  let lastLog = started;
  for (;;) {
    // reltuples is -1 before a table's first vacuum or analyze: counted as 0, so the thresholds alone apply.
    const { rows } = await db.query<{ relname: string }>(
      `WITH s AS (SELECT name, setting::float8 AS v FROM pg_settings WHERE name LIKE 'autovacuum_%')
       SELECT t.relname FROM pg_stat_user_tables t JOIN pg_class c ON c.oid = t.relid
        WHERE t.schemaname = current_schema() AND ($1::text[] IS NULL OR t.relname = ANY($1::text[]))
          AND (t.n_mod_since_analyze > (SELECT v FROM s WHERE name = 'autovacuum_analyze_threshold')
                 + (SELECT v FROM s WHERE name = 'autovacuum_analyze_scale_factor') * greatest(c.reltuples, 0)
            OR t.n_ins_since_vacuum > (SELECT v FROM s WHERE name = 'autovacuum_vacuum_insert_threshold')
                 + (SELECT v FROM s WHERE name = 'autovacuum_vacuum_insert_scale_factor') * greatest(c.reltuples, 0)
            OR t.n_dead_tup > (SELECT v FROM s WHERE name = 'autovacuum_vacuum_threshold')
                 + (SELECT v FROM s WHERE name = 'autovacuum_vacuum_scale_factor') * greatest(c.reltuples, 0))
        ORDER BY 1`,
      [options.tables ?? null],
    );
    const seconds = Math.round((performance.now() - started) / 1000);
    if (rows.length === 0)
      return {
        caughtUp: true,
        seconds,
        lagging: [],
        text: `autovacuum had caught up with ${named} after ${seconds} s`,
      };
    const lagging = rows.map((r) => r.relname);
    if (performance.now() - started > options.maxMs)
      return {
        caughtUp: false,
        seconds,
        lagging,
        text: `autovacuum had not caught up with ${lagging.join(', ')} after ${seconds} s: measured without`,
      };
    if (options.log && performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      options.log(`autovacuum: waiting for ${lagging.join(', ')} (${seconds} s)`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 5_000));
  }
}
