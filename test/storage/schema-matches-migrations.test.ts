// Proves the migrated database is exactly what prisma/schema.prisma describes: tables, columns, types,
// nullability, defaults, enums, indexes and foreign keys (Prisma's own DMMF parser reads the schema).
import fs from 'node:fs';
import internals from '@prisma/internals';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE } from '../../src/paths.js';
import { freshDatabase } from '../helpers/database.js';

type Dmmf = Awaited<ReturnType<typeof internals.getDMMF>>;
let dmmf: Dmmf;
let db: pg.Client;

const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp with time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
  Float: 'double precision',
};
/** The native types (@db.X) whose column type is not the scalar's. */
const NATIVE_TYPES: Record<string, string> = { Uuid: 'uuid', Json: 'json', Date: 'date' };
const ON_DELETE: Record<string, string> = { Cascade: 'c', Restrict: 'r', SetNull: 'n', NoAction: 'a', SetDefault: 'd' };

beforeAll(async () => {
  dmmf = await internals.getDMMF({ datamodel: fs.readFileSync(SCHEMA_FILE, 'utf8') });
  const { url } = await freshDatabase();
  db = new pg.Client({ connectionString: url });
  await db.connect();
});

// Registered after the database helper's own hook, so it runs first: the client ends before its database is dropped.
afterAll(() => db.end());

const column = (field: { name: string; dbName?: string | null }) => field.dbName ?? field.name;

describe('migrated database matches schema.prisma', () => {
  it('has exactly the tables of the models (plus _prisma_migrations)', async () => {
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    const expected = dmmf.datamodel.models.map((m) => m.dbName ?? m.name);
    expect(rows.map((r) => r.table_name).sort()).toEqual([...expected, '_prisma_migrations'].sort());
  });

  it('has every column with its type, nullability and default, and no others', async () => {
    for (const model of dmmf.datamodel.models) {
      const table = model.dbName ?? model.name;
      const { rows } = await db.query<{
        column_name: string;
        data_type: string;
        udt_name: string;
        is_nullable: string;
        column_default: string | null;
        datetime_precision: number | null;
      }>(
        `SELECT column_name, data_type, udt_name, is_nullable, column_default, datetime_precision
           FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`,
        [table],
      );
      const actual = new Map(rows.map((r) => [r.column_name, r]));
      const fields = model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');
      expect([...actual.keys()].sort(), `columns of ${table}`).toEqual(fields.map(column).sort());
      for (const field of fields) {
        const col = actual.get(column(field))!;
        const where = `${table}.${column(field)}`;
        if (field.kind === 'enum') {
          const enumDef = dmmf.datamodel.enums.find((e) => e.name === field.type)!;
          expect(col.data_type, where).toBe('USER-DEFINED');
          expect(col.udt_name, where).toBe(enumDef.dbName ?? enumDef.name);
        } else {
          const native = (field.nativeType as [string, string[]] | null)?.[0];
          const expectedType = NATIVE_TYPES[native ?? ''] ?? SCALAR_TYPES[field.type];
          expect(col.data_type, where).toBe(expectedType);
          if (native === 'Timestamptz')
            expect(col.datetime_precision, where).toBe(Number((field.nativeType as [string, string[]])[1][0] ?? 6));
        }
        expect(col.is_nullable, where).toBe(field.isRequired ? 'NO' : 'YES');
        // uuid() and @updatedAt are filled in by the client; every other @default must live in the database.
        const clientSide = field.isUpdatedAt || (field.default as { name?: string } | undefined)?.name === 'uuid';
        expect(col.column_default !== null, `default of ${where}`).toBe(Boolean(field.hasDefaultValue && !clientSide));
      }
    }
  });

  it('has every enum with exactly its values, in order', async () => {
    for (const enumDef of dmmf.datamodel.enums) {
      const { rows } = await db.query<{ enumlabel: string }>(
        `SELECT e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = $1 ORDER BY e.enumsortorder`,
        [enumDef.dbName ?? enumDef.name],
      );
      expect(
        rows.map((r) => r.enumlabel),
        enumDef.name,
      ).toEqual(enumDef.values.map((v) => v.dbName ?? v.name));
    }
  });

  it('has every primary key, unique and normal index, with the same columns in order', async () => {
    const { rows } = await db.query<{
      table: string;
      unique: boolean;
      primary: boolean;
      columns: string[];
      partial: boolean;
    }>(
      `SELECT t.relname AS table, ix.indisunique AS unique, ix.indisprimary AS primary, ix.indpred IS NOT NULL AS partial,
              array_agg(a.attname::text ORDER BY k.ord) AS columns
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
         CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        GROUP BY t.relname, ix.indexrelid, ix.indisunique, ix.indisprimary, ix.indpred`,
    );
    const found = (table: string, kind: string, columns: string[]) =>
      rows.some(
        (r) =>
          r.table === table &&
          !r.partial &&
          r.columns.join(',') === columns.join(',') &&
          (kind === 'id' ? r.primary : kind === 'unique' ? r.unique && !r.primary : !r.unique),
      );
    for (const index of dmmf.datamodel.indexes) {
      const model = dmmf.datamodel.models.find((m) => m.name === index.model)!;
      const table = model.dbName ?? model.name;
      const columns = index.fields.map((f) => column(model.fields.find((mf) => mf.name === f.name)!));
      expect(found(table, index.type, columns), `${index.type} index on ${table}(${columns.join(', ')})`).toBe(true);
    }
    // And nothing unplanned: each full (non-partial) DB index is one the schema declares.
    const declared = dmmf.datamodel.indexes.length;
    expect(rows.filter((r) => !r.partial && r.table !== '_prisma_migrations').length).toBe(declared);
  });

  it('has every foreign key with its columns, target and ON DELETE rule', async () => {
    const { rows } = await db.query<{
      table: string;
      columns: string[];
      target: string;
      target_columns: string[];
      on_delete: string;
    }>(
      `SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS target, c.confdeltype AS on_delete,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS columns,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n) AS target_columns
         FROM pg_constraint c WHERE c.contype = 'f'`,
    );
    let declared = 0;
    for (const model of dmmf.datamodel.models) {
      for (const field of model.fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length)) {
        declared++;
        const target = dmmf.datamodel.models.find((m) => m.name === field.type)!;
        const columns = field.relationFromFields!.map((n) => column(model.fields.find((f) => f.name === n)!));
        const targetColumns = field.relationToFields!.map((n) => column(target.fields.find((f) => f.name === n)!));
        const fk = rows.find((r) => r.table === (model.dbName ?? model.name) && r.columns.join() === columns.join());
        expect(fk, `foreign key ${model.name}.${field.name}`).toBeDefined();
        expect(fk!.target).toBe(target.dbName ?? target.name);
        expect(fk!.target_columns).toEqual(targetColumns);
        expect(fk!.on_delete, `ON DELETE of ${model.name}.${field.name}`).toBe(
          ON_DELETE[field.relationOnDelete ?? 'NoAction'],
        );
      }
    }
    expect(rows.length).toBe(declared);
  });
});
