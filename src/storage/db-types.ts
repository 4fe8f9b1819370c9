// Types and helpers every Prisma-backed storage module shares: kept in a leaf so none imports another table's module.
import pg from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

/** A client or a transaction: the admin layer composes these functions inside its transactions. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** A unique violation (P2002): e.g. an email already taken. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'P2002';
}

/** The server refused a hand-written statement (one bad row): worth retrying item by item. Not a timeout or a lost connection. */
export function refusedByServer(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}
