// A bulk statement for the seeder: many rows at once, on the test client's pool, without a request's time limit.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { QueryConfig, QueryResultRow } from 'pg';
import type { PrismaClient } from '../../../src/generated/prisma/client.js';
import { sqlPool } from '../../../src/storage/database.js';

/**
 * Where a seed writes: the test's Prisma client (its pool), or a connection of the test's own (a plan-reporting client,
 * a pool of its choosing), so that the rows are written where and as the test reads them.
 */
export type Db = PrismaClient | pg.ClientBase | pg.Pool;

/**
 * A bulk statement on the client's pool (or the given connection), without the service's 1.5 s read timeout
 * (createPrisma's): a seed of many rows on a busy machine may take longer, and it is no request.
 */
export async function bulk<R extends QueryResultRow = QueryResultRow>(
  db: Db,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  // pg reads query_timeout from a query's config too (Client.query), though its types list it for the client only.
  const query = { text, values, query_timeout: 300_000 } as QueryConfig;
  const on = '$executeRawUnsafe' in db ? sqlPool(db) : db;
  return (await on.query<R>(query)).rows;
}

/**
 * A statement run as written, for what Prisma's types forbid on purpose (a row of an older release without a column a
 * migration added, a value a check constraint was added against, many rows from generate_series): `sql` says it, and
 * the test's comment says why.
 */
export function runSql(prisma: PrismaClient, sql: string, ...values: unknown[]): Promise<number> {
  return prisma.$executeRawUnsafe(sql, ...values);
}

/**
 * One row of `table` as given (columns named as in the database, an id made when none is given); returns its id: a
 * test that spells out every time of a row the API would stamp with its own clock.
 */
export async function insertRow(db: Db, table: string, row: Record<string, unknown>): Promise<string> {
  const entries = Object.entries({ id: row.id ?? randomUUID(), ...row });
  const columns = entries.map(([k]) => k).join(', ');
  const params = entries.map((_, i) => `$${i + 1}`).join(', ');
  await bulk(
    db,
    `INSERT INTO ${table} (${columns}) VALUES (${params})`,
    entries.map(([, v]) => v),
  );
  return entries[0]![1] as string;
}

/** One column of insertUnnested: its name, the type its array travels as, a cast to the column's own type. */
export interface UnnestedColumn {
  name: string;
  type: string;
  cast?: string;
  values: readonly unknown[];
}

/**
 * Rows of `table` in one statement, one array per column (all as long), each row with a new random id, in the order
 * given (the table's physical order); returns their ids in that order.
 */
export async function insertUnnested(db: Db, table: string, columns: readonly UnnestedColumn[]): Promise<string[]> {
  const names = columns.map((c) => c.name);
  const rows = await bulk<{ id: string }>(
    db,
    `INSERT INTO ${table} (id, ${names.join(', ')})
     SELECT gen_random_uuid(), ${columns.map((c) => `r.${c.name}${c.cast ? `::${c.cast}` : ''}`).join(', ')}
       FROM unnest(${columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')}) WITH ORDINALITY AS r(${names.join(', ')}, n)
      ORDER BY r.n
     RETURNING id::text`,
    columns.map((c) => c.values.map((v) => (v instanceof Date ? v.toISOString() : (v ?? null)))),
  );
  return rows.map((r) => r.id);
}
