// The PostgreSQL the bench runs on. By default the embedded PostgreSQL the product ships (what `npm start` runs with
// no DATABASE_URL: src/storage/embedded-postgres.ts), started here in a temporary DATA_DIR of the bench's own with its
// stock settings (autovacuum on), and stopped and removed on every way out. BENCH_DATABASE_URL (an admin connection
// string) runs on another server instead: its figures are then that server's, not the default deployment's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/storage/embedded-postgres.js';
import { withDatabase } from './setup.js';

export interface BenchPostgres {
  /** A connection string with the rights to create and drop databases (the `postgres` database). */
  adminUrl: string;
  /** 'embedded' (the default) or 'BENCH_DATABASE_URL'. */
  kind: 'embedded' | 'BENCH_DATABASE_URL';
  /** Where the embedded server keeps its data (removed by stop). */
  dataDir?: string;
  stop(): Promise<void>;
}

export async function benchPostgres(log: (message: string) => void): Promise<BenchPostgres> {
  const url = process.env.BENCH_DATABASE_URL;
  if (url) return { adminUrl: url, kind: 'BENCH_DATABASE_URL', stop: async () => undefined };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-bench-pg-'));
  let stopped = false;
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    // 'cli': this process owns the server it starts, and close() stops it (pg_ctl stop -m fast).
    const embedded = await startEmbeddedPostgres(dir, 'cli', log);
    return {
      // The same server and credentials (scram-sha-256, user postgres) as the service database's URL.
      adminUrl: withDatabase(embedded.url, 'postgres'),
      kind: 'embedded',
      dataDir: path.join(dir, 'pg'),
      async stop() {
        if (stopped) return;
        stopped = true;
        await embedded.close();
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}
