// Runs the replica scaling of issue 16.4 (bench/scale/replicas.ts) alone: a fresh database with 200 tenants whose
// webhooks go to a receiver here, `npm run bench`'s accepting environment, the table printed, the database dropped.
// `npm run build` first; then `npx tsx bench/scale/replicas-main.ts` (BENCH_ROUNDS, BENCH_DRAIN_CALLS, BENCH_BUDGET_SECONDS to change the size).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReceiver } from '../receiver.js';
import { acceptingEnv } from '../service-env.js';
import { createTenants, freshDatabase, machineFacts } from '../setup.js';
import { replicaTable, runReplicaScaling } from './replicas.js';

const env = process.env;
const ADMIN_URL = env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const LOG_DIR = path.join(os.tmpdir(), 'oct-bench-replicas');
const log = (line: string) => process.stdout.write(`[replicas ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main() {
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  log(
    `${machine.cores} cores, ${machine.cpuModel}, Node ${machine.node}, PostgreSQL ${machine.postgres}; load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; logs in ${LOG_DIR}`,
  );
  const receiver = await startReceiver();
  const database = await freshDatabase(ADMIN_URL, 'replicas');
  // Interrupted: drop the database (its services share our process group and get the same signal).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void database.drop().finally(() => process.exit(130)));
  try {
    const tenants = await createTenants(database.url, 200, receiver.url);
    const started = Date.now();
    const runs = await runReplicaScaling({
      databaseUrl: database.url,
      redisUrl: REDIS_URL,
      serviceEnv: acceptingEnv(REDIS_URL),
      keys: tenants,
      logDir: LOG_DIR,
      log,
      ...(env.BENCH_ROUNDS ? { rounds: Number(env.BENCH_ROUNDS) } : {}),
      ...(env.BENCH_DRAIN_CALLS ? { drainCalls: Number(env.BENCH_DRAIN_CALLS) } : {}),
      ...(env.BENCH_BUDGET_SECONDS ? { budgetSeconds: Number(env.BENCH_BUDGET_SECONDS) } : {}),
    });
    process.stdout.write(
      `\n${replicaTable(runs)}\n\nReplica runs took ${Math.round((Date.now() - started) / 1000)} s; load average ${os
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
