// The engine-free migrator: applies once, records like Prisma, refuses edited or failed migrations, and two
// replicas starting together do not race.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import { createPrisma } from '../../src/storage/database.js';
import { migrate, readMigrations } from '../../src/storage/migrate.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function copyMigrations(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-migrations-'));
  await fs.cp(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

describe('migrate', () => {
  it('applies every migration once and records it in _prisma_migrations with its SHA-256 checksum', async () => {
    const { url } = await freshDatabase({ empty: true });
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(0);

    const first = await migrate(url);
    expect(first.applied).toEqual(migrations.map((m) => m.name));
    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    for (const [i, migration] of migrations.entries()) {
      const sql = await fs.readFile(path.join(MIGRATIONS_DIR, migration.name, 'migration.sql'));
      expect(rows[i]).toMatchObject({
        migration_name: migration.name,
        applied_steps_count: 1,
        checksum: createHash('sha256').update(sql).digest('hex'),
      });
      expect(rows[i]!.finished_at).toBeInstanceOf(Date);
    }

    const second = await migrate(url);
    expect(second).toEqual({ applied: [], alreadyApplied: migrations.map((m) => m.name) });
  });

  it('lets several processes migrate one database at the same time: each migration runs exactly once', async () => {
    const { url } = await freshDatabase({ empty: true });
    const results = await Promise.all([migrate(url), migrate(url), migrate(url), migrate(url)]);
    const appliedCounts = results.map((r) => r.applied.length);
    expect(appliedCounts.filter((n) => n > 0)).toHaveLength(1);
    const rows = await query(url, 'SELECT migration_name FROM _prisma_migrations');
    expect(rows).toHaveLength((await readMigrations()).length);
  });

  it('refuses a migration that was edited after it was applied', async () => {
    const { url } = await freshDatabase({ empty: true });
    const dir = await copyMigrations();
    await migrate(url, dir);
    const [first] = await readMigrations(dir);
    await fs.appendFile(path.join(dir, first!.name, 'migration.sql'), '\n-- edited\n');
    await expect(migrate(url, dir)).rejects.toThrow(/was changed after it was applied/);
  });

  it('applies nothing of a failing migration and names it', async () => {
    const { url } = await freshDatabase({ empty: true });
    const dir = await copyMigrations();
    await fs.mkdir(path.join(dir, '29990101000000_broken'));
    await fs.writeFile(
      path.join(dir, '29990101000000_broken', 'migration.sql'),
      'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n',
    );
    await expect(migrate(url, dir)).rejects.toThrow(/29990101000000_broken failed/);
    const tables = await query(url, `SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
    expect(tables).toHaveLength(0);
    const recorded = await query(
      url,
      `SELECT 1 FROM _prisma_migrations WHERE migration_name = '29990101000000_broken'`,
    );
    expect(recorded).toHaveLength(0);
  });

  it('stops at a migration Prisma recorded as failed, like prisma migrate deploy', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // Inline SQL (not the seeder): Prisma's own bookkeeping, as a deploy that failed leaves it, is the subject.
    await query(
      url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ('x', 'y', '20990101000000_failed', now())`,
    );
    await expect(migrate(url)).rejects.toThrow(/20990101000000_failed failed earlier/);
  });
});

describe('online migrations (CREATE INDEX CONCURRENTLY, issue 25)', () => {
  async function withOnlineIndex(sql: string): Promise<string> {
    const dir = await copyMigrations();
    await fs.mkdir(path.join(dir, '29990101000000_online_index'));
    await fs.writeFile(path.join(dir, '29990101000000_online_index', 'migration.sql'), sql);
    return dir;
  }
  const indexes = (url: string) =>
    query<{ name: string; valid: boolean }>(
      url,
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'calls_online_probe'`,
    );

  it('builds the index outside a transaction while other processes wait for the lock, and records it once', async () => {
    const { url } = await freshDatabase({ empty: true });
    const dir = await withOnlineIndex(
      '-- Built online: writes to calls are not blocked.\nCREATE INDEX CONCURRENTLY IF NOT EXISTS calls_online_probe ON calls (phone_number);\n',
    );
    // Four processes at once: the one holding the lock builds; the others must not hold a snapshot it waits for.
    const results = await Promise.all([migrate(url, dir), migrate(url, dir), migrate(url, dir), migrate(url, dir)]);
    expect(results.filter((r) => r.applied.includes('29990101000000_online_index'))).toHaveLength(1);
    expect(await indexes(url)).toEqual([{ name: 'calls_online_probe', valid: true }]);
    const recorded = await query<{ finished_at: Date | null }>(
      url,
      `SELECT finished_at FROM _prisma_migrations WHERE migration_name = '29990101000000_online_index'`,
    );
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.finished_at).toBeInstanceOf(Date);
  });

  it('after a build that failed half-way, records nothing and rebuilds the invalid index at the next start', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // A duplicate makes the unique build fail after PostgreSQL created the index: it is left behind, invalid. (A probe
    // table of the test's own, in SQL: the seeder writes only the service's tables.)
    await query(url, 'CREATE TABLE probe (v int); INSERT INTO probe VALUES (1), (1), (2)');
    const dir = await withOnlineIndex(
      'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS calls_online_probe ON probe (v);\n',
    );
    await expect(migrate(url, dir)).rejects.toThrow(
      /29990101000000_online_index failed \(it runs again at the next start\)/,
    );
    expect(await indexes(url)).toEqual([{ name: 'calls_online_probe', valid: false }]);
    expect(
      await query(url, `SELECT 1 FROM _prisma_migrations WHERE migration_name = '29990101000000_online_index'`),
    ).toHaveLength(0);

    // The duplicate removed by hand, as an operator would before the next start.
    await query(url, 'DELETE FROM probe WHERE ctid = (SELECT min(ctid) FROM probe WHERE v = 1)');
    const resumed = await migrate(url, dir);
    expect(resumed.applied).toEqual(['29990101000000_online_index']);
    expect(await indexes(url)).toEqual([{ name: 'calls_online_probe', valid: true }]);
  });

  it('refuses a CONCURRENTLY migration of several statements before running anything', async () => {
    const { url } = await freshDatabase({ empty: true });
    const dir = await withOnlineIndex(
      'CREATE TABLE never_made (id int);\nCREATE INDEX CONCURRENTLY calls_online_probe ON calls (phone_number);\n',
    );
    await expect(migrate(url, dir)).rejects.toThrow(/put each CONCURRENTLY statement in a migration of its own/);
    expect(await query(url, `SELECT 1 FROM information_schema.tables WHERE table_name = 'never_made'`)).toHaveLength(0);
  });
});

/**
 * An agency (…0a) with a client (…0c), and a standalone agency (…0b): the fills of an agency column read them. In SQL,
 * not the seeder: a database this file migrates itself, written as the releases before and after the step wrote it.
 */
const THREE_ACCOUNTS = `INSERT INTO accounts (id, kind, name, agency_id, plan, updated_at) VALUES
  ('00000000-0000-4000-8000-00000000000a', 'agency', 'Agency', NULL, 'agency', now()),
  ('00000000-0000-4000-8000-00000000000c', 'client', 'Client', '00000000-0000-4000-8000-00000000000a', NULL, now()),
  ('00000000-0000-4000-8000-00000000000b', 'agency', 'Other', NULL, 'agency', now())`;

describe('batched fills (a DO block that commits between batches, issue 25)', () => {
  const FILL = '20261129100001_calls_agency_id_filled';

  async function withFill(sql: string): Promise<string> {
    const dir = await copyMigrations();
    await fs.mkdir(path.join(dir, '29990101000000_fill'));
    await fs.writeFile(path.join(dir, '29990101000000_fill', 'migration.sql'), sql);
    return dir;
  }

  // Fills probe.v in batches of 100 (each committed), and fails at id 250 while the table `stop` exists.
  const PROBE_FILL = `-- A fill in batches.
DO $$
DECLARE lo int := 0;
BEGIN
  LOOP
    EXIT WHEN NOT EXISTS (SELECT 1 FROM probe WHERE id > lo);
    IF lo >= 200 AND to_regclass('stop') IS NOT NULL THEN
      RAISE EXCEPTION 'stopped at %', lo;
    END IF;
    UPDATE probe SET v = 1 WHERE id > lo AND id <= lo + 100 AND v IS NULL;
    lo := lo + 100;
    COMMIT;
  END LOOP;
END $$;
`;

  it('runs outside a transaction: a failure keeps the batches committed, and the next start finishes', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    await query(url, 'CREATE TABLE probe (id int PRIMARY KEY, v int); CREATE TABLE stop ()');
    // The probe table the fill under test reads (the test's own table, in SQL).
    await query(url, 'INSERT INTO probe (id) SELECT g FROM generate_series(1, 1000) AS g');
    const dir = await withFill(PROBE_FILL);
    expect((await readMigrations(dir)).find((m) => m.name === '29990101000000_fill')?.online).toBeDefined();
    await expect(migrate(url, dir)).rejects.toThrow(/29990101000000_fill failed \(it runs again at the next start\)/);
    expect(await query(url, 'SELECT count(v)::int AS filled FROM probe')).toEqual([{ filled: 200 }]);
    expect(await query(url, `SELECT 1 FROM _prisma_migrations WHERE migration_name = '29990101000000_fill'`)).toEqual(
      [],
    );

    await query(url, 'DROP TABLE stop');
    expect((await migrate(url, dir)).applied).toEqual(['29990101000000_fill']);
    expect(await query(url, 'SELECT count(v)::int AS filled FROM probe')).toEqual([{ filled: 1000 }]);
  });

  it('refuses a block that commits beside another statement before running anything', async () => {
    const { url } = await freshDatabase({ empty: true });
    const dir = await withFill(`CREATE TABLE never_made (id int);\n${PROBE_FILL}`);
    await expect(migrate(url, dir)).rejects.toThrow(/the block must be the migration's only statement/);
    expect(await query(url, `SELECT 1 FROM information_schema.tables WHERE table_name = 'never_made'`)).toHaveLength(0);
  });

  it('fills calls.agency_id of the calls written before it, in batches, and the trigger every call since', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // An agency with a client, and a standalone agency; 12,000 calls (three batches) spread over the three. In SQL: the
    // fill and the trigger under test must see rows written by plain INSERTs, as the release before wrote them.
    await query(
      url,
      `${THREE_ACCOUNTS};
       INSERT INTO agents (id, account_id, agency_id, name, phone_number, updated_at)
       SELECT gen_random_uuid(), id, coalesce(agency_id, id), 'Agent', '+14155550100', now() FROM accounts;
       INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, not_before, expires_at,
                          created_at, updated_at)
       SELECT gen_random_uuid(), g.account_id, g.id, '+14155550123', '+14155550100', '{}', now(), now(), now(), now()
         FROM generate_series(1, 4000) CROSS JOIN agents g`,
    );
    const wrong = () =>
      query<{ wrong: number; empty: number }>(
        url,
        `SELECT count(*) FILTER (WHERE c.agency_id IS DISTINCT FROM coalesce(a.agency_id, a.id))::int AS wrong,
                count(*) FILTER (WHERE c.agency_id IS NULL)::int AS empty
           FROM calls c JOIN accounts a ON a.id = c.account_id`,
      );
    // The trigger filled them; as the release before left them, they have none.
    expect(await wrong()).toEqual([{ wrong: 0, empty: 0 }]);
    await query(url, 'UPDATE calls SET agency_id = NULL');
    await query(url, `DELETE FROM _prisma_migrations WHERE migration_name = '${FILL}'`);
    expect(await wrong()).toEqual([{ wrong: 12_000, empty: 12_000 }]);
    expect((await migrate(url)).applied).toEqual([FILL]);
    expect(await wrong()).toEqual([{ wrong: 0, empty: 0 }]);
  });
});

describe("webhook_endpoints.agency_id (the Overview reads an agency's endpoints by it)", () => {
  const COLUMN = '20261129200000_webhook_endpoints_agency_id';
  const INDEX = '20261129200001_webhook_endpoints_agency_index';

  it('fills the endpoints written before it, and the trigger every endpoint since, whatever inserts it', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // Inline SQL: the trigger under test must fill an endpoint whatever inserts it, a plain INSERT included.
    const endpoint = (account: string) =>
      `INSERT INTO webhook_endpoints (id, account_id, url, secret, updated_at)
       VALUES (gen_random_uuid(), '${account}', 'https://hooks.example.test/in', 'whsec_test', now())`;
    await query(
      url,
      `${THREE_ACCOUNTS};
       ${endpoint('00000000-0000-4000-8000-00000000000a')};
       ${endpoint('00000000-0000-4000-8000-00000000000c')};`,
    );
    const agencies = () =>
      query<{ name: string; agency: string | null }>(
        url,
        `SELECT a.name, e.agency_id AS agency FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id
          ORDER BY a.name`,
      );
    const AGENCY = '00000000-0000-4000-8000-00000000000a';
    // The agency's own endpoint and its client's carry the agency.
    expect(await agencies()).toEqual([
      { name: 'Agency', agency: AGENCY },
      { name: 'Client', agency: AGENCY },
    ]);
    // As the release before left them: no column, no trigger; then this release's two steps.
    await query(
      url,
      `DROP TRIGGER webhook_endpoints_agency_before_insert ON webhook_endpoints;
       ALTER TABLE webhook_endpoints DROP COLUMN agency_id;
       DELETE FROM _prisma_migrations WHERE migration_name IN ('${COLUMN}', '${INDEX}');
       ${endpoint('00000000-0000-4000-8000-00000000000b')};`,
    );
    expect((await migrate(url)).applied).toEqual([COLUMN, INDEX]);
    expect(await agencies()).toEqual([
      { name: 'Agency', agency: AGENCY },
      { name: 'Client', agency: AGENCY },
      { name: 'Other', agency: '00000000-0000-4000-8000-00000000000b' },
    ]);
    const [index] = await query<{ indexdef: string }>(
      url,
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'webhook_endpoints_agency_id_idx'`,
    );
    expect(index?.indexdef).toContain('(agency_id)');
    // The dashboard's way (Prisma's upsert) for another client of the agency (the client in SQL, as THREE_ACCOUNTS).
    await query(
      url,
      `INSERT INTO accounts (id, kind, name, agency_id, updated_at) VALUES
         ('00000000-0000-4000-8000-00000000000d', 'client', 'Second', '00000000-0000-4000-8000-00000000000a', now())`,
    );
    const prisma = createPrisma(url, { max: 1 });
    try {
      await storageOf(prisma).endpoints.upsertEndpoint(
        '00000000-0000-4000-8000-00000000000d',
        {
          url: 'https://hooks.example.test/second',
          secret: 'whsec_test',
        },
        { now: new Date() },
      );
    } finally {
      await prisma.$disconnect();
    }
    expect((await agencies()).find((e) => e.name === 'Second')).toEqual({ name: 'Second', agency: AGENCY });
  });
});

describe("call_outcome_days.agency_id (the Overview reads an agency's counters of the day by it)", () => {
  const COLUMN = '20261129300000_call_outcome_days_agency_id';
  const AGENCY = '00000000-0000-4000-8000-00000000000a';
  const OTHER = '00000000-0000-4000-8000-00000000000b';

  it('fills the counters written before it, and each counter written since carries its account’s agency', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // Calls of each account that ended today, completed, and one of the client's that failed: their counters. In SQL,
    // as THREE_ACCOUNTS: plain INSERTs before and after the step, whose triggers make the counters under test.
    const ended = (status: string, reason: string | null, accounts: string) =>
      `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, failure_reason,
                          not_before, expires_at, created_at, updated_at, ended_at)
       SELECT gen_random_uuid(), g.account_id, g.id, '+14155550123', '+14155550100', '{}', '${status}',
              ${reason === null ? 'NULL' : `'${reason}'`}, now(), now(), now(), now(), now()
         FROM agents g WHERE g.account_id IN (${accounts})`;
    await query(
      url,
      `${THREE_ACCOUNTS};
       INSERT INTO agents (id, account_id, agency_id, name, phone_number, updated_at)
       SELECT gen_random_uuid(), id, coalesce(agency_id, id), 'Agent', '+14155550100', now() FROM accounts;
       ${ended('completed', null, 'SELECT id FROM accounts')};`,
    );
    const counters = () =>
      query<{ name: string; outcome: string; agency: string | null; calls: number }>(
        url,
        `SELECT a.name, o.outcome, o.agency_id AS agency, o.calls FROM call_outcome_days o
           JOIN accounts a ON a.id = o.account_id ORDER BY a.name, o.outcome`,
      );
    const before = [
      { name: 'Agency', outcome: 'completed', agency: AGENCY, calls: 1 },
      { name: 'Client', outcome: 'completed', agency: AGENCY, calls: 1 },
      { name: 'Other', outcome: 'completed', agency: OTHER, calls: 1 },
    ];
    expect(await counters()).toEqual(before);
    // As the release before left them: no column, no trigger, no index; then this release's step fills them.
    await query(
      url,
      `DROP TRIGGER call_outcome_days_agency_before_insert ON call_outcome_days;
       ALTER TABLE call_outcome_days DROP COLUMN agency_id;
       DELETE FROM _prisma_migrations WHERE migration_name = '${COLUMN}'`,
    );
    expect((await migrate(url)).applied).toEqual([COLUMN]);
    expect(await counters()).toEqual(before);
    const [index] = await query<{ indexdef: string }>(
      url,
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'call_outcome_days_agency_id_day_idx'`,
    );
    expect(index?.indexdef).toContain('(agency_id, day)');
    // A new counter (the client's first failure of the day) and an existing one (its second completed call).
    await query(url, ended('failed', 'busy', `'00000000-0000-4000-8000-00000000000c'`));
    await query(url, ended('completed', null, `'00000000-0000-4000-8000-00000000000c'`));
    expect(await counters()).toEqual([
      before[0],
      { name: 'Client', outcome: 'busy', agency: AGENCY, calls: 1 },
      { name: 'Client', outcome: 'completed', agency: AGENCY, calls: 2 },
      before[2],
    ]);
  });
});

describe('call_outcome_quarters (the Overview\'s "today" from the viewer\'s local midnight, issue 47)', () => {
  const QUARTERS = '20261202110000_call_outcome_quarters';
  const MONTH = '20261202090000_call_outcome_days_month';

  it('counts the calls of the last 48 hours when it runs and each call that ends after, and keeps the days', async () => {
    const { url } = await freshDatabase({ empty: true });
    await migrate(url);
    // As the release before left them: no table, and the trigger functions of 20261202090000 (its SQL again, which
    // replaces them and recounts the days), the truncate's of 20261128100000.
    const month = await fs.readFile(path.join(MIGRATIONS_DIR, MONTH, 'migration.sql'), 'utf8');
    await query(
      url,
      `${month};
       CREATE OR REPLACE FUNCTION oct_calls_outcomes_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN DELETE FROM call_outcome_days; RETURN NULL; END $$;
       DROP TABLE call_outcome_quarters;
       DROP FUNCTION oct_outcome_quarters_since();
       DROP FUNCTION oct_outcome_quarter(timestamptz);
       DELETE FROM _prisma_migrations WHERE migration_name = '${QUARTERS}'`,
    );
    // Calls of each account that ended `ago` before now, in SQL as THREE_ACCOUNTS: plain INSERTs before and after the
    // step, whose triggers make the counters under test.
    const ended = (ago: string, status: string, reason: string | null, outcome: string | null) =>
      `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, failure_reason,
                          outcome, not_before, expires_at, created_at, updated_at, ended_at)
       SELECT gen_random_uuid(), g.account_id, g.id, '+14155550123', '+14155550100', '{}', '${status}',
              ${reason === null ? 'NULL' : `'${reason}'`}, ${outcome === null ? 'NULL' : `'${outcome}'`},
              now(), now(), now(), now(), now() - interval '${ago}'
         FROM agents g`;
    await query(
      url,
      `${THREE_ACCOUNTS};
       INSERT INTO agents (id, account_id, agency_id, name, phone_number, updated_at)
       SELECT gen_random_uuid(), id, coalesce(agency_id, id), 'Agent', '+14155550100', now() FROM accounts;
       ${ended('50 hours', 'completed', null, null)};
       ${ended('30 hours', 'completed', null, 'booked')};
       ${ended('2 minutes', 'failed', 'busy', null)};`,
    );
    const quarters = () =>
      query<{ name: string; agency: string; quarter: Date; outcome: string; calls: number }>(
        url,
        `SELECT a.name, o.agency_id AS agency, o.quarter, o.outcome, o.calls FROM call_outcome_quarters o
           JOIN accounts a ON a.id = o.account_id ORDER BY a.name, o.quarter, o.outcome`,
      );
    // What counting the calls gives: each call's UTC quarter hour, by outcome (and its runtime's label), since the
    // quarter 48 hours back.
    const counted = () =>
      query<{ name: string; agency: string; quarter: Date; outcome: string; calls: number }>(
        url,
        `SELECT a.name, coalesce(a.agency_id, a.id) AS agency,
                to_timestamp(floor(extract(epoch FROM c.ended_at) / 900) * 900) AS quarter, k.outcome,
                count(*)::int AS calls
           FROM calls c JOIN accounts a ON a.id = c.account_id
          CROSS JOIN LATERAL (VALUES (coalesce(c.failure_reason::text, c.status::text)),
                                     (CASE WHEN c.status = 'completed' THEN 'agent:' || c.outcome END)) AS k(outcome)
          WHERE k.outcome IS NOT NULL AND c.ended_at >= oct_outcome_quarters_since()
          GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4`,
      );
    const days = () =>
      query(url, `SELECT account_id, agency_id, day, outcome, calls FROM call_outcome_days ORDER BY 1, 3, 4`);
    const daysBefore = await days();
    expect((await migrate(url)).applied).toEqual([QUARTERS]);
    const filled = await quarters();
    // Three accounts, each: completed and agent:booked 30 hours ago, busy 2 minutes ago; not the calls of 50 hours ago.
    expect(filled).toHaveLength(9);
    expect(filled).toEqual(await counted());
    expect(new Set(filled.filter((q) => q.name !== 'Other').map((q) => q.agency))).toEqual(
      new Set(['00000000-0000-4000-8000-00000000000a']),
    );
    expect(await days()).toEqual(daysBefore);
    // Calls that end after it: a new counter and an existing one; a label changed; a call deleted.
    await query(
      url,
      `${ended('1 minute', 'completed', null, 'booked')};
       ${ended('2 minutes', 'failed', 'busy', null)};
       UPDATE calls SET outcome = 'rebooked' WHERE outcome = 'booked' AND ended_at < now() - interval '1 hour';
       DELETE FROM calls WHERE id = (SELECT id FROM calls WHERE failure_reason = 'busy' LIMIT 1);`,
    );
    const after = await quarters();
    expect(after).toEqual(await counted());
    expect(after.length).toBeGreaterThan(filled.length);
    expect(after.filter((q) => q.outcome === 'agent:rebooked')).toHaveLength(3);
    // Today's quarters sum to today's day counters (each quarter lies within one UTC day).
    expect(
      await query(
        url,
        `SELECT account_id, outcome, sum(calls)::int AS calls FROM call_outcome_quarters
          WHERE quarter >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' GROUP BY 1, 2 ORDER BY 1, 2`,
      ),
    ).toEqual(
      await query(
        url,
        `SELECT account_id, outcome, calls FROM call_outcome_days
          WHERE day = (now() AT TIME ZONE 'UTC')::date ORDER BY 1, 2`,
      ),
    );
    await query(url, 'TRUNCATE calls CASCADE');
    expect(await quarters()).toEqual([]);
  });
});

describe("a migration's locks file (issue 25.6)", () => {
  // An acceptance's order, reduced: the account's row lock, its call's insert, then the account's counter (a trigger).
  // Tables of the test's own, written in SQL: the statements' lock order is the subject.
  const TABLES = `CREATE TABLE acc (id int PRIMARY KEY, n int NOT NULL DEFAULT 0); INSERT INTO acc VALUES (1);
                  CREATE TABLE cal (id int)`;
  // A migration that locks them the other way round, as 20261128100000's foreign key (accounts) and count (calls) do.
  const OTHER_WAY_ROUND = `LOCK TABLE acc IN SHARE ROW EXCLUSIVE MODE;\nLOCK TABLE cal IN SHARE ROW EXCLUSIVE MODE;\n`;

  async function migrationDir(sql: string, locks?: string): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-migrations-'));
    await fs.mkdir(path.join(dir, '29990101000000_locks'));
    await fs.writeFile(path.join(dir, '29990101000000_locks', 'migration.sql'), sql);
    if (locks !== undefined) await fs.writeFile(path.join(dir, '29990101000000_locks', 'locks'), locks);
    return dir;
  }

  /** Polls until a backend of the database waits for a lock while running `LOCK TABLE ...`. */
  const untilWaiting = (admin: pg.Client) =>
    waitFor(
      async () =>
        (
          await admin.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE%'`,
          )
        ).rowCount,
      (waiting) => (waiting ?? 0) > 0,
      5_000,
    );

  /**
   * An acceptance that has inserted its call when the migration starts, and updates its account once the migration
   * waits: what the writer's statements and the migration end with.
   */
  async function acceptanceDuring(url: string, dir: string) {
    const writer = new pg.Client({ connectionString: url });
    const admin = new pg.Client({ connectionString: url });
    await Promise.all([writer.connect(), admin.connect()]);
    try {
      await writer.query('BEGIN');
      await writer.query('SELECT 1 FROM acc WHERE id = 1 FOR NO KEY UPDATE');
      await writer.query('INSERT INTO cal VALUES (1)');
      const migrating = migrate(url, dir).then(
        () => 'applied',
        (error: Error) => error.message,
      );
      await untilWaiting(admin);
      const wrote = await writer.query('UPDATE acc SET n = n + 1 WHERE id = 1').then(
        async () => {
          await writer.query('COMMIT');
          return 'committed';
        },
        async (error: Error) => {
          await writer.query('ROLLBACK');
          return error.message;
        },
      );
      return { wrote, migrated: await migrating };
    } finally {
      await Promise.all([writer.end(), admin.end()]);
    }
  }

  it('without it, a migration locking the tables the other way round deadlocks with the acceptance', async () => {
    const { url } = await freshDatabase({ empty: true });
    await query(url, TABLES);
    const { wrote, migrated } = await acceptanceDuring(url, await migrationDir(OTHER_WAY_ROUND));
    // PostgreSQL undoes one of the two after its deadlock check: the acceptance or the migration.
    expect([wrote, migrated].filter((outcome) => /deadlock detected/.test(outcome))).toHaveLength(1);
  });

  it('takes its locks first, in its order: the acceptance commits and the migration then runs', async () => {
    const { url } = await freshDatabase({ empty: true });
    await query(url, TABLES);
    const dir = await migrationDir(
      OTHER_WAY_ROUND,
      '# the acceptance locks calls, then accounts\ncal SHARE ROW EXCLUSIVE\nacc   SHARE ROW  EXCLUSIVE\n',
    );
    expect(await acceptanceDuring(url, dir)).toEqual({ wrote: 'committed', migrated: 'applied' });
    expect(await query(url, 'SELECT n FROM acc')).toEqual([{ n: 1 }]);
    // The file is not part of the migration's checksum: it orders the locks and changes nothing the SQL does.
    const [recorded] = await query<{ checksum: string }>(url, 'SELECT checksum FROM _prisma_migrations');
    expect(recorded!.checksum).toBe(createHash('sha256').update(OTHER_WAY_ROUND).digest('hex'));
  });

  it('refuses a locks file it cannot read as tables and lock modes, and one on an online migration', async () => {
    for (const [locks, error] of [
      [
        'calls SHARE ROW EXCLUSIVE; DROP TABLE calls',
        /its locks file has "calls SHARE ROW EXCLUSIVE; DROP TABLE calls"/,
      ],
      ['calls SHARE ROW', /its locks file has "calls SHARE ROW"/],
      ['"calls" EXCLUSIVE', /its locks file has/],
    ] as const) {
      await expect(readMigrations(await migrationDir('SELECT 1;\n', locks))).rejects.toThrow(error);
    }
    await expect(
      readMigrations(
        await migrationDir('CREATE INDEX CONCURRENTLY probe ON calls (id);\n', 'calls SHARE UPDATE EXCLUSIVE\n'),
      ),
    ).rejects.toThrow(/runs outside a transaction: it cannot take locks first/);
  });

  it('is read for the outcome counters: calls first, then accounts', async () => {
    const counters = (await readMigrations()).find((m) => m.name === '20261128100000_call_outcome_days');
    expect(counters?.locksFirst).toEqual([
      { table: 'calls', mode: 'SHARE ROW EXCLUSIVE' },
      { table: 'accounts', mode: 'SHARE ROW EXCLUSIVE' },
    ]);
  });
});
