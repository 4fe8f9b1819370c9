// Types and helpers every Prisma-backed storage module shares: kept in a leaf so none imports another table's module.
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

/** A client or a transaction: the admin layer composes these functions inside its transactions. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** A unique violation (P2002): e.g. an email already taken. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'P2002';
}
