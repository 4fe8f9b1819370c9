// Every hand-written statement of src/storage/ prepares against the migrated schema (a column renamed or dropped in
// a migration fails here), and the call column list read by hand-written SQL names every column of schema.prisma's
// Call model under its Prisma name.
import fs from 'node:fs';
import path from 'node:path';
import internals from '@prisma/internals';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE } from '../../src/paths.js';
import { declaredStatements, statement } from '../../src/storage/statements.js';
import { freshDatabase } from '../helpers/database.js';

let db: pg.Client;
const STORAGE_DIR = path.resolve('src/storage');

beforeAll(async () => {
  // Loading every storage module declares its statements.
  for (const file of fs.readdirSync(STORAGE_DIR).filter((f) => f.endsWith('.ts')))
    await import(path.join(STORAGE_DIR, file));
  const { url } = await freshDatabase();
  db = new pg.Client({ connectionString: url });
  await db.connect();
});
afterAll(() => db.end());

describe('hand-written SQL', () => {
  it('declares statements under unique names', () => {
    const statements = declaredStatements();
    expect(statements.length).toBeGreaterThan(1);
    expect(new Set(statements.map((s) => s.name)).size).toBe(statements.length);
  });

  it('every statement prepares against the migrated schema', async () => {
    const failures: string[] = [];
    for (const [i, { name, text }] of declaredStatements().entries()) {
      await db.query(`PREPARE check_${i} AS ${text}`).then(
        () => db.query(`DEALLOCATE check_${i}`),
        (error: Error) => failures.push(`${name}: ${error.message}`),
      );
    }
    expect(failures).toEqual([]);
  });

  it('a statement naming a column that does not exist is caught (the check can fail)', async () => {
    await expect(db.query('PREPARE check_bad AS SELECT no_such_column FROM calls')).rejects.toThrow(/no_such_column/);
  });
});

describe('statements planned on each execution', () => {
  it('are sent unnamed, so PostgreSQL never caches a generic plan for them; the others are prepared once', () => {
    // The webhook claim's generic plan, cached after a phase with few pending deliveries, took up to 197 ms a pass
    // once thousands were due (bench (e) after (d): 509/s; planned each time: 6,897/s).
    expect(statement('oct_test_each_time', 'SELECT 1', { planEachTime: true }).name).toBeUndefined();
    expect(statement('oct_test_prepared', 'SELECT 2').name).toBe('oct_test_prepared');
  });
});

describe('the call column list', () => {
  it('names every column of the Call model under its Prisma field name', async () => {
    const { CALL_COLUMNS } = await import('../../src/storage/calls.js');
    const dmmf = await internals.getDMMF({ datamodel: fs.readFileSync(SCHEMA_FILE, 'utf8') });
    const call = dmmf.datamodel.models.find((m) => m.name === 'Call')!;
    const scalars = call.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum').map((f) => f.name);
    const { rows } = await db
      .query(`SELECT ${CALL_COLUMNS} FROM calls c LIMIT 0`)
      .then((r) => ({ rows: r.fields.map((f) => f.name) }));
    expect([...rows].sort()).toEqual([...scalars].sort());
  });
});
