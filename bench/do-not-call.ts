// A do-not-call list at bench size. `BENCH_DNC_ENTRIES=1000000 npm run bench` puts that many numbers on the first
// bench tenant's list before the service starts, through the product's own import (importDoNotCall, what
// `callctl dnc import` runs: 5,000 rows per INSERT in one transaction). The bench issues no ANALYZE after it: the plans
// are what the product and autovacuum leave (issue 25.1). Every trigger's check then probes a unique index of a
// million entries (the index's depth, not whose entries they are, sets a probe's cost), and that tenant's triggers
// probe inside its own million-number list. None of the numbers is the one the load triggers, so every trigger is
// still accepted. Run alone, `npx tsx bench/do-not-call.ts [count]` seeds a fresh database on the embedded
// PostgreSQL (or BENCH_DATABASE_URL), prints how long that took and the plan of the acceptance's check, and drops it.
import pg from 'pg';
import { pathToFileURL } from 'node:url';
import { importDoNotCall } from '../src/admin/do-not-call.js';
import { createStorage } from '../src/storage/index.js';
import { benchPostgres } from './database.js';
import { connect, createTenants, freshDatabase } from './setup.js';

/** How many numbers `npm run bench` puts on a list (0: none, today's bench). */
export const DNC_ENTRIES = Number(process.env.BENCH_DNC_ENTRIES || 0);

/** The import file: numbers +12020000001, +12020000002, ... (none is the bench's +14155552671); a tenth with a reason. */
function importFile(count: number): Uint8Array {
  const lines = ['phone_number,reason'];
  for (let n = 1; n <= count; n++)
    lines.push(`+1202${String(n).padStart(7, '0')},${n % 10 === 0 ? 'bench: asked not to be called' : ''}`);
  return new TextEncoder().encode(`${lines.join('\n')}\n`);
}

/** The acceptance function's check (migration 20261125011000), as it runs for a trigger of `accountId`. */
const CHECK = `
  SELECT EXISTS (SELECT 1 FROM do_not_call_entries
                  WHERE account_id IN ($1::uuid, $2::uuid) AND phone_number = $3) AS listed`;

/** Imports `count` numbers into `accountId`'s list as an operator would; the seconds it took. */
export async function seedDoNotCall(databaseUrl: string, accountId: string, count: number): Promise<number> {
  const storage = createStorage(databaseUrl, { max: 2 });
  try {
    const started = performance.now();
    const outcome = await importDoNotCall(storage, {
      accountId,
      file: importFile(count),
      fileName: 'bench.csv',
      actor: { kind: 'operator' },
      now: new Date(),
    });
    if (!outcome.ok) throw new Error(`the bench's import was refused: ${JSON.stringify(outcome.problems.slice(0, 3))}`);
    if (outcome.added !== count) throw new Error(`the bench's import added ${outcome.added} of ${count} numbers`);
    return (performance.now() - started) / 1000;
  } finally {
    await storage.close();
  }
}

/** EXPLAIN (ANALYZE) of the check for a trigger of `accountId` (its own agency: both ids the same) to `phone`. */
export async function checkPlan(db: pg.Client, accountId: string, phone: string): Promise<string> {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${CHECK}`, [
    accountId,
    accountId,
    phone,
  ]);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

async function main() {
  const count = Number(process.argv[2] ?? (DNC_ENTRIES || 1_000_000));
  // The embedded PostgreSQL the product ships, as `npm run bench` runs on (BENCH_DATABASE_URL for another server).
  const postgres = await benchPostgres((line) => process.stdout.write(`${line}\n`));
  const database = await freshDatabase(postgres.adminUrl, 'dnc').catch(async (error: unknown) => {
    await postgres.stop();
    throw error;
  });
  try {
    const [tenant] = await createTenants(database.url, 1);
    const seconds = await seedDoNotCall(database.url, tenant!.accountId, count);
    process.stdout.write(`seeded ${count.toLocaleString('en-US')} numbers in ${seconds.toFixed(1)} s\n`);
    const db = await connect(database.url);
    try {
      const size = await db.query<{ size: string }>(
        "SELECT pg_size_pretty(pg_relation_size('do_not_call_entries_account_id_phone_number_key')) AS size",
      );
      process.stdout.write(`unique index: ${size.rows[0]!.size}\n`);
      for (const phone of ['+14155552671', '+12020500000'])
        process.stdout.write(
          `\n${phone} (${phone === '+14155552671' ? 'not listed' : 'listed'}):\n${await checkPlan(db, tenant!.accountId, phone)}\n`,
        );
    } finally {
      await db.end();
    }
  } finally {
    await database.drop();
    await postgres.stop();
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
