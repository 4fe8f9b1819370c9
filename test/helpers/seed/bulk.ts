// A bulk statement for the seeder: many rows at once, on the test client's pool, without a request's time limit.
import type { QueryConfig, QueryResultRow } from 'pg';
import type { PrismaClient } from '../../../src/generated/prisma/client.js';
import { sqlPool } from '../../../src/storage/database.js';

/**
 * A bulk statement on the client's pool, without the service's 1.5 s read timeout (createPrisma's): a seed of many rows
 * on a busy machine may take longer, and it is no request.
 */
export async function bulk<R extends QueryResultRow = QueryResultRow>(
  prisma: PrismaClient,
  text: string,
  values: unknown[],
): Promise<R[]> {
  // pg reads query_timeout from a query's config too (Client.query), though its types list it for the client only.
  const query = { text, values, query_timeout: 300_000 } as QueryConfig;
  return (await sqlPool(prisma).query<R>(query)).rows;
}

/**
 * A statement run as written, for what Prisma's types forbid on purpose (a row of an older release without a column a
 * migration added, a value a check constraint was added against, many rows from generate_series): `sql` says it, and
 * the test's comment says why.
 */
export function runSql(prisma: PrismaClient, sql: string, ...values: unknown[]): Promise<number> {
  return prisma.$executeRawUnsafe(sql, ...values);
}
