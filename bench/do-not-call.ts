// A do-not-call list at bench size. `BENCH_DNC_ENTRIES=1000000 npm run bench` puts that many numbers on the first
// bench tenant's list before the service starts (one INSERT ... SELECT generate_series, then ANALYZE): every trigger's
// check then probes a unique index of a million entries (the index's depth, not whose entries they are, sets a probe's
// cost), and that tenant's triggers probe inside its own million-number list. None of the numbers is the one the load
// triggers, so every trigger is still accepted. Run alone, `npx tsx bench/do-not-call.ts [count]` seeds a fresh
// database on BENCH_DATABASE_URL, prints how long that took and the plan of the acceptance's check, and drops it.
import pg from 'pg';
import { pathToFileURL } from 'node:url';
import { connect, createTenants, freshDatabase } from './setup.js';

/** How many numbers `npm run bench` puts on a list (0: none, today's bench). */
export const DNC_ENTRIES = Number(process.env.BENCH_DNC_ENTRIES || 0);

/** Numbers +12020000001, +12020000002, ... (none is the bench's +14155552671); a tenth with a reason. */
const SEED = `
  INSERT INTO do_not_call_entries (id, account_id, phone_number, reason, added_by, added_at)
  SELECT gen_random_uuid(), $1::uuid, '+1202' || lpad(n::text, 7, '0'),
         CASE WHEN n % 10 = 0 THEN 'bench: asked not to be called' END, 'bench', now()
    FROM generate_series(1, $2::int) AS n`;

/** The acceptance function's check (migration 20261125011000), as it runs for a trigger of `accountId`. */
const CHECK = `
  SELECT EXISTS (SELECT 1 FROM do_not_call_entries
                  WHERE account_id IN ($1::uuid, $2::uuid) AND phone_number = $3) AS listed`;

/** Seeds `count` numbers on `accountId`'s list; the seconds it took (insert and ANALYZE). */
export async function seedDoNotCall(databaseUrl: string, accountId: string, count: number): Promise<number> {
  const db = await connect(databaseUrl);
  try {
    const started = performance.now();
    await db.query(SEED, [accountId, count]);
    await db.query('ANALYZE do_not_call_entries');
    return (performance.now() - started) / 1000;
  } finally {
    await db.end();
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
  const adminUrl = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const count = Number(process.argv[2] ?? (DNC_ENTRIES || 1_000_000));
  const database = await freshDatabase(adminUrl, 'dnc');
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
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
