// The cap per callee's count (issue 48.8) with a million dials in the last 24 hours. `npx tsx bench/cap-check.ts
// [dials]` seeds a fresh database on the embedded PostgreSQL (or BENCH_DATABASE_URL) with that many callee_dials rows
// (default 1,000,000) spread over the last 24 hours, 100,000 numbers, 4 agencies and 40 accounts (set-based, one
// INSERT ... SELECT from generate_series), then times the dispatcher's own count statement (calleeLedgerOn, as a claim
// runs it: named, so planned generically after five runs) for one call and for a claim's 50 calls, 1,000 runs each,
// and the lock-then-count pair in a transaction, first as the seed leaves the table and then after VACUUM ANALYZE
// (what autovacuum leaves), and prints the generic plan. The database is dropped at the end.
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { calleeLedgerOn, COUNT_DIALS, type DialCountRequest } from '../src/storage/callee-dials.js';
import { benchPostgres } from './database.js';
import { connect, freshDatabase } from './setup.js';

const NUMBERS = 100_000;
const AGENCIES = 4;
const ACCOUNTS = 40;
const RUNS = 1_000;
const now = new Date();

/** Agency i's id, account j's id: fixed, so that a request names ones that exist. */
const agencyId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const accountId = (j: number) => `00000000-0000-4000-9000-${String(j).padStart(12, '0')}`;
const phone = (n: number) => `+1202${String(n).padStart(7, '0')}`;

async function seed(db: pg.Client, dials: number): Promise<number> {
  const started = performance.now();
  // Dial n: number n mod NUMBERS, account n mod ACCOUNTS, whose agency is (n mod ACCOUNTS) mod AGENCIES; every number
  // is one agency's (NUMBERS is a multiple of AGENCIES), dialled dials / NUMBERS times within the last 24 hours.
  await db.query(
    `INSERT INTO callee_dials (call_id, attempt, agency_id, account_id, phone_number, dialed_at)
     SELECT gen_random_uuid(), 1,
            ('00000000-0000-4000-8000-' || lpad(((n % $2) % $3)::text, 12, '0'))::uuid,
            ('00000000-0000-4000-9000-' || lpad((n % $2)::text, 12, '0'))::uuid,
            '+1202' || lpad((n % $4)::text, 7, '0'),
            $5::timestamptz - random() * interval '24 hours'
       FROM generate_series(0, $1::int - 1) AS n`,
    [dials, ACCOUNTS, AGENCIES, NUMBERS, now],
  );
  return (performance.now() - started) / 1000;
}

/** A claim's requests: `calls` random numbers, each under 3 per 24 hours counted across its agency, or its account. */
function requests(calls: number, scope: 'agency' | 'account' = 'agency'): DialCountRequest[] {
  return Array.from({ length: calls }, () => {
    const n = Math.floor(Math.random() * NUMBERS);
    const scopeId = scope === 'agency' ? agencyId(n % AGENCIES) : accountId(n % ACCOUNTS);
    return { scope, scopeId, phone: phone(n), windowHours: 24, limit: 3 };
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function time(label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 20; i++) await run(); // prepared, and past the custom plans
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(3);
  process.stdout.write(`  ${label}: p50 ${f(percentile(ms, 0.5))} ms, p99 ${f(percentile(ms, 0.99))} ms\n`);
}

async function measure(db: pg.Client, title: string): Promise<void> {
  process.stdout.write(`${title}\n`);
  const ledger = calleeLedgerOn(db);
  await time('count, 1 call', () => ledger.count(requests(1), now));
  await time('count, 1 call, account scope', () => ledger.count(requests(1, 'account'), now));
  await time('count, a claim of 50 calls', () => ledger.count(requests(50), now));
  await time('BEGIN, lock 50 callees, count, COMMIT', async () => {
    const asked = requests(50);
    await db.query('BEGIN');
    try {
      await ledger.lock(asked.map((r) => `${r.scopeId}:${r.phone}`));
      await ledger.count(asked, now);
    } finally {
      await db.query('COMMIT');
    }
  });
}

async function plan(db: pg.Client): Promise<string> {
  const asked = requests(50);
  // The generic plan, as the named statement settles on it.
  await db.query(`SET plan_cache_mode = force_generic_plan`);
  const columns = (scope: string) => {
    const rs = asked.filter((r) => r.scope === scope);
    return [rs.map((r) => r.scopeId), rs.map((r) => r.phone), rs.map((r) => r.windowHours), rs.map((r) => r.limit)];
  };
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${COUNT_DIALS.text}`,
    [...columns('agency'), ...columns('account'), now],
  );
  await db.query(`RESET plan_cache_mode`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

async function main() {
  const dials = Number(process.argv[2] ?? 1_000_000);
  const postgres = await benchPostgres((line) => process.stdout.write(`${line}\n`));
  const database = await freshDatabase(postgres.adminUrl, 'caps').catch(async (error: unknown) => {
    await postgres.stop();
    throw error;
  });
  try {
    const db = await connect(database.url);
    try {
      const seconds = await seed(db, dials);
      const size = await db.query<{ table: string; agency: string }>(
        `SELECT pg_size_pretty(pg_relation_size('callee_dials')) AS table,
                pg_size_pretty(pg_relation_size('callee_dials_agency')) AS agency`,
      );
      process.stdout.write(
        `seeded ${dials.toLocaleString('en-US')} dials (${NUMBERS.toLocaleString('en-US')} numbers) in ` +
          `${seconds.toFixed(1)} s; table ${size.rows[0]!.table}, index (agency, number, dialed_at) ${size.rows[0]!.agency}\n`,
      );
      await measure(db, 'as seeded (no VACUUM, no ANALYZE yet):');
      await db.query('VACUUM ANALYZE callee_dials');
      await measure(db, 'after VACUUM ANALYZE (what autovacuum leaves):');
      process.stdout.write(`\ngeneric plan of the count, a claim of 50 calls:\n${await plan(db)}\n`);
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
